#include "common/op_catalog.h"

#include <algorithm>

#include "mculab/ops.h"

namespace mculab {

const std::vector<OpInfo>& AllOps() {
  // The window parameters conv2d_s8 and depthwise_conv2d_s8 share.
  static const OpParam kBatches{"N", {"n", "batch", "batches"}, std::nullopt, 1};
  static const OpParam kHeight{"H", {"h", "height", "in_h", "input_height", "ih"}, std::nullopt, 1};
  static const OpParam kWidth{"W", {"w", "width", "in_w", "input_width", "iw"}, std::nullopt, 1};
  static const OpParam kKernelH{
      "kernel_h", {"kernel_shape_0", "kh", "kernel_height", "filter_h"}, std::nullopt, 1};
  static const OpParam kKernelW{
      "kernel_w", {"kernel_shape_1", "kw", "kernel_width", "filter_w"}, std::nullopt, 1};
  static const OpParam kPadH{"pad_h", {"pads_0", "padding_h", "ph"}, 0, 0};
  static const OpParam kPadW{"pad_w", {"pads_1", "padding_w", "pw"}, 0, 0};
  static const OpParam kStrideH{"stride_h", {"strides_0", "sh"}, 1, 1};
  static const OpParam kStrideW{"stride_w", {"strides_1", "sw"}, 1, 1};
  static const std::vector<OpInfo> kOps = {
      {"conv2d_s8",
       MCULAB_OP_CONV2D_S8,
       "int8 2-D convolution, NHWC, per-channel requantization (TFLite reference semantics)",
       {
           kBatches,
           {"C", {"c", "in_channels", "input_channels", "cin", "ic"}, std::nullopt, 1},
           kHeight,
           kWidth,
           {"K",
            {"k", "out_channels", "output_channels", "filters", "cout", "oc", "m"},
            std::nullopt,
            1},
           kKernelH,
           kKernelW,
           kPadH,
           kPadW,
           kStrideH,
           kStrideW,
       },
       "kernel_h * kernel_w * C <= " + std::to_string(MCULAB_MAX_DEPTH) +
           " (the accumulation depth); kernel_h <= H + 2 * pad_h and kernel_w <= W + 2 * pad_w"},
      {"depthwise_conv2d_s8",
       MCULAB_OP_DEPTHWISE_CONV2D_S8,
       "int8 depthwise 2-D convolution, NHWC, per-channel requantization, dilations (TFLite "
       "reference semantics)",
       {
           kBatches,
           {"C", {"c", "in_channels", "input_channels", "cin", "ic", "channels"}, std::nullopt, 1},
           kHeight,
           kWidth,
           {"depth_multiplier", {"dm", "multiplier", "channel_multiplier"}, 1, 1},
           kKernelH,
           kKernelW,
           kPadH,
           kPadW,
           kStrideH,
           kStrideW,
           {"dilation_h", {"dilations_0", "dh"}, 1, 1},
           {"dilation_w", {"dilations_1", "dw"}, 1, 1},
       },
       "output channels C * depth_multiplier; the dilated kernel (dilation * (kernel - 1) + 1) "
       "no larger than the padded input"},
      {"fully_connected_s8",
       MCULAB_OP_FULLY_CONNECTED_S8,
       "int8 fully connected layer, per-tensor requantization (TFLite reference semantics)",
       {
           {"N", {"n", "batch", "batches"}, 1, 1},
           {"in_features",
            {"in", "input_size", "input_features", "c", "k_in", "accum_depth"},
            std::nullopt,
            1},
           {"out_features",
            {"out", "output_size", "output_features", "units", "k", "m"},
            std::nullopt,
            1},
       },
       "in_features <= " + std::to_string(MCULAB_MAX_DEPTH) + " (the accumulation depth)"},
      // The loop of known length and instruction mix (ops.h table): for checking counters and
      // passes against an independent count (`mculab submit --op calibrate --events ...`).
      {"calibrate",
       MCULAB_OP_CALIBRATE,
       "a loop of known length and instruction mix (kind 0 alu, 1 ldst, 2 mve, 3 mve_tp, 4 ldm) "
       "for checking counters",
       {
           {"kind", {"cal_kind", "loop_kind"}, std::nullopt, 0, MCULAB_CAL_NUM_KINDS - 1},
           {"loops", {"passes", "count"}, std::nullopt, 1, MCULAB_CAL_MAX_LOOPS},
       },
       ""},
  };
  return kOps;
}

const OpInfo* FindOp(std::string_view name) {
  for (const auto& op : AllOps())
    if (op.name == name) return &op;
  return nullptr;
}

const OpInfo* FindOp(std::uint16_t id) {
  for (const auto& op : AllOps())
    if (op.id == id) return &op;
  return nullptr;
}

std::string OpNames() {
  std::string out;
  for (const auto& op : AllOps()) {
    if (!out.empty()) out += ", ";
    out += op.name;
  }
  return out;
}

Status ValidateCaseParams(const OpInfo& op, const std::vector<std::int32_t>& params) {
  if (params.size() != op.params.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     op.name + " takes " + std::to_string(op.params.size()) + " parameters, got " +
                         std::to_string(params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] < op.params[i].min_value) {
      return MakeError(ErrorCode::kInvalidArgument,
                       op.name + " parameter " + op.params[i].name +
                           " must be >= " + std::to_string(op.params[i].min_value) + ", got " +
                           std::to_string(params[i]));
    }
    if (params[i] > op.params[i].max_value) {
      return MakeError(ErrorCode::kInvalidArgument,
                       op.name + " parameter " + op.params[i].name +
                           " must be <= " + std::to_string(op.params[i].max_value) +
                           " (the kernel's limit), got " + std::to_string(params[i]));
    }
  }
  // The kernel's own limits (firmware_stub/kernels/ops.c): a case it would refuse is refused here.
  if (params.size() <= MCULAB_MAX_PARAMS) {
    std::int32_t p[MCULAB_MAX_PARAMS] = {};
    std::copy(params.begin(), params.end(), p);
    if (mculab_case_arena_bytes(op.id, p) == 0) {
      std::string limits;
      switch (op.id) {
        case MCULAB_OP_CONV2D_S8:
          limits =
              "every size at most 65535, kernel_h x kernel_w x C (the accumulation depth) at most "
              "65536, and the kernel no larger than the padded input";
          break;
        case MCULAB_OP_DEPTHWISE_CONV2D_S8:
          limits =
              "every size at most 65535, C x depth_multiplier at most 65535, and the dilated "
              "kernel no larger than the padded input";
          break;
        case MCULAB_OP_FULLY_CONNECTED_S8:
          limits =
              "every size at most 65535 and in_features (the accumulation depth) at most 65536";
          break;
        case MCULAB_OP_CALIBRATE:
          limits = "kind 0 to " + std::to_string(MCULAB_CAL_NUM_KINDS - 1) + " and loops at most " +
                   std::to_string(MCULAB_CAL_MAX_LOOPS);
          break;
        default:
          limits = "the parameters the kernel accepts";
          break;
      }
      return MakeError(ErrorCode::kInvalidArgument,
                       op.name + " case is outside the kernel's limits: " + limits);
    }
  }
  return {};
}

}  // namespace mculab
