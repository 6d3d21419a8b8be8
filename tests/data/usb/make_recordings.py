#!/usr/bin/env python3
"""Writes the umockdev recordings of the debug probes the USB discovery tests play to libusb.

No probe is attached to the machines that wrote them: the descriptors are written from the public
descriptor values of each probe (vendor/product ids, device class, interfaces and endpoints of its
debug interface and virtual COM port, string descriptors). Run it again after editing a probe below;
the .umockdev files it writes are committed.
"""
import pathlib
import struct


def device_descriptor(vid, pid, bcd_device, dev_class=(0xEF, 0x02, 0x01)):
    return struct.pack('<BBHBBBBHHHBBBB', 18, 1, 0x0200, *dev_class, 64, vid, pid, bcd_device,
                       1, 2, 3, 1)


def interface(num, cls, sub, proto, endpoints, alt=0):
    d = struct.pack('<BBBBBBBBB', 9, 4, num, alt, len(endpoints), cls, sub, proto, 0)
    for addr, attrs, size in endpoints:
        d += struct.pack('<BBBBHB', 7, 5, addr, attrs, size, 0 if attrs == 2 else 16)
    return d


def config(interfaces, num_interfaces):
    body = b''.join(interfaces)
    return struct.pack('<BBHBBBBB', 9, 2, 9 + len(body), num_interfaces, 1, 0, 0x80, 250) + body


BULK, INTR = 2, 3
# CDC ACM pair (the virtual COM port): communication interface n, data interface n+1.
def cdc(n, notify_ep, in_ep, out_ep):
    return (interface(n, 0x02, 0x02, 0x01, [(notify_ep, INTR, 8)]) +
            interface(n + 1, 0x0A, 0x00, 0x00, [(out_ep, BULK, 64), (in_ep, BULK, 64)]))


PROBES = {
    # ST-LINK/V2-1 (NUCLEO-64/144 boards): debug interface 0 (vendor class), mass storage 1,
    # virtual COM port on interfaces 2/3 (/dev/serial/by-id/...-if02).
    'stlink-v2-1': dict(
        vid=0x0483, pid=0x374b, bcd=0x0100, manufacturer='STMicroelectronics',
        product='STM32 STLink', serial='0669FF383333524E43123456', busnum=1, devnum=5,
        port='1-2',
        config=config([
            interface(0, 0xFF, 0xFF, 0xFF, [(0x81, BULK, 64), (0x01, BULK, 64),
                                            (0x82, BULK, 64)]),
            interface(1, 0x08, 0x06, 0x50, [(0x83, BULK, 64), (0x03, BULK, 64)]),
            cdc(2, 0x84, 0x85, 0x05)], 4)),
    # STLINK-V3 (STLINK-V3SET/MINIE, NUCLEO-H7 "-Q" boards): 0483:374e, high speed.
    'stlink-v3': dict(
        vid=0x0483, pid=0x374e, bcd=0x0100, manufacturer='STMicroelectronics',
        product='STLINK-V3', serial='002F00283438510B34313939', busnum=1, devnum=7, speed=480,
        port='1-3.1',
        config=config([
            interface(0, 0xFF, 0xFF, 0xFF, [(0x81, BULK, 512), (0x01, BULK, 512),
                                            (0x82, BULK, 512)]),
            interface(1, 0x08, 0x06, 0x50, [(0x83, BULK, 512), (0x03, BULK, 512)]),
            cdc(2, 0x84, 0x85, 0x05)], 4)),
    # Arm DAPLink (CMSIS-DAP v1 HID + v2 bulk, virtual COM port, mass storage): 0d28:0204.
    'daplink': dict(
        vid=0x0d28, pid=0x0204, bcd=0x1000, manufacturer='ARM',
        product='DAPLink CMSIS-DAP',
        serial='0240000032044e4500257009997b00386781000097969900', busnum=2, devnum=3,
        port='2-1',
        config=config([
            interface(0, 0x08, 0x06, 0x50, [(0x82, BULK, 64), (0x02, BULK, 64)]),
            cdc(1, 0x83, 0x84, 0x04),
            interface(3, 0x03, 0x00, 0x00, [(0x81, INTR, 64), (0x01, INTR, 64)]),
            interface(4, 0xFF, 0x00, 0x00, [(0x05, BULK, 64), (0x85, BULK, 64)])], 5)),
}


def recording(p):
    dev = device_descriptor(p['vid'], p['pid'], p['bcd'])
    # umockdev 0.17 reads hexadecimal values in upper case only (lower case: "malformed ... line").
    desc = (dev + p['config']).hex().upper()
    bus, devnum = p['busnum'], p['devnum']
    node = f'bus/usb/{bus:03d}/{devnum:03d}'
    lines = [
        f"P: /devices/pci0000:00/0000:00:14.0/usb{bus}/{p['port']}",
        f'N: {node}={desc}',
        f'E: DEVNAME=/dev/{node}',
        'E: DEVTYPE=usb_device',
        'E: DRIVER=usb',
        f"E: PRODUCT={p['vid']:x}/{p['pid']:x}/{p['bcd']:x}",
        'E: TYPE=239/2/1',
        f'E: BUSNUM={bus:03d}',
        f'E: DEVNUM={devnum:03d}',
        'E: MAJOR=189',
        f'E: MINOR={(bus - 1) * 128 + devnum - 1}',
        'E: SUBSYSTEM=usb',
        f"E: ID_VENDOR_ID={p['vid']:04x}",
        f"E: ID_MODEL_ID={p['pid']:04x}",
        f"E: ID_SERIAL_SHORT={p['serial']}",
        'A: bConfigurationValue=1',
        'A: bDeviceClass=ef',
        'A: bMaxPacketSize0=64',
        f"A: bNumInterfaces={p['config'][4]:2d}",
        f"A: bcdDevice={p['bcd']:04x}",
        f'A: busnum={bus}',
        f'A: devnum={devnum}',
        f"A: devpath={p['port'].split('-', 1)[1]}",
        f"A: idProduct={p['pid']:04x}",
        f"A: idVendor={p['vid']:04x}",
        f"A: manufacturer={p['manufacturer']}",
        f"A: product={p['product']}",
        f"A: serial={p['serial']}",
        f"A: speed={p.get('speed', 12)}",
        f'H: descriptors={desc}',
        '',
    ]
    return '\n'.join(lines) + '\n'


if __name__ == '__main__':
    here = pathlib.Path(__file__).parent
    for name, p in PROBES.items():
        (here / f'{name}.umockdev').write_text(recording(p))
