#!/usr/bin/env python3
"""write_model.py: writes the example runner's model blob (examples/custom_runner/main.c).

The blob is 56 bytes, little-endian:
  offset  size  field
   0      u32   magic 0x4D58434D ("MCXM" read as bytes M C X M)
   4      u32   version, 1
   8      i32   x 11  conv2d parameters: N, C, H, W, K, kernel_h, kernel_w, pad_h, pad_w,
                      stride_h, stride_w (the order of `mculab ops describe conv2d_s8`)
  52      i32   the fully connected layer's output features (its input is the conv output,
                flattened per batch)
The tensors' contents are not in the blob: the runner makes them from the workload's seed.

  examples/custom_runner/write_model.py -o model.bin
  examples/custom_runner/write_model.py --conv 1,8,16,16,8,3,3,1,1,1,1 --fc-out 16 -o model.bin
  mculab submit --board host-0 --firmware build/bin/mculab-example-runner-host --blob model.bin --wait
"""
import argparse
import struct
import sys

MAGIC = 0x4D58434D
VERSION = 1
CONV_PARAMS = ("N", "C", "H", "W", "K", "kernel_h", "kernel_w", "pad_h", "pad_w", "stride_h",
               "stride_w")
DEFAULT_CONV = (1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1)
DEFAULT_FC_OUT = 10


def model_blob(conv=DEFAULT_CONV, fc_out=DEFAULT_FC_OUT):
    """The blob's bytes for conv2d parameters `conv` (11 values) and `fc_out` output features."""
    conv = tuple(int(v) for v in conv)
    if len(conv) != len(CONV_PARAMS):
        raise ValueError(f"--conv takes {len(CONV_PARAMS)} values ({','.join(CONV_PARAMS)}), "
                         f"got {len(conv)}")
    for name, v in zip(CONV_PARAMS, conv):
        low = 0 if name.startswith("pad") else 1
        if not low <= v <= 65535:
            raise ValueError(f"conv2d parameter {name} must be in {low}..65535, got {v}")
    if not 1 <= int(fc_out) <= 65535:
        raise ValueError(f"--fc-out must be in 1..65535, got {fc_out}")
    return struct.pack("<II11ii", MAGIC, VERSION, *conv, int(fc_out))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("--conv", default=",".join(map(str, DEFAULT_CONV)),
                    help="the 11 conv2d parameters, comma separated (default %(default)s)")
    ap.add_argument("--fc-out", type=int, default=DEFAULT_FC_OUT,
                    help="fully connected output features (default %(default)s)")
    ap.add_argument("-o", "--output", required=True, help="file to write ('-' for stdout)")
    args = ap.parse_args(argv)
    try:
        blob = model_blob([v for v in args.conv.split(",") if v.strip()], args.fc_out)
    except ValueError as e:
        print(f"write_model.py: {e}", file=sys.stderr)
        return 2
    if args.output == "-":
        sys.stdout.buffer.write(blob)
    else:
        with open(args.output, "wb") as f:
            f.write(blob)
        print(f"wrote {args.output} ({len(blob)} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
