"""Prints what CMake needs to build the PyTorch bridge against the torch of
this Python, one `key=value` per line, or exits 1 with the reason on stderr.

Keys: version, include (torch/include), lib (torch/lib), cxx11_abi (0/1),
c10_cuda (the path of libc10_cuda.so), build_id (its GNU build id, hex,
empty when it has none), cuda (the CUDA version torch was built with).
"""
import os
import struct
import sys


def build_id(path):
    """The NT_GNU_BUILD_ID note of an ELF64 little-endian file, as hex."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return ""
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        pos, end = p_offset, p_offset + p_filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name = data[pos + 12:pos + 12 + namesz]
            desc_at = pos + 12 + ((namesz + 3) & ~3)
            if ntype == 3 and name.rstrip(b"\0") == b"GNU":
                return data[desc_at:desc_at + descsz].hex()
            pos = desc_at + ((descsz + 3) & ~3)
    return ""


def main():
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch"
        print("torch cannot be imported: %s" % e, file=sys.stderr)
        return 1
    root = os.path.dirname(torch.__file__)
    lib = os.path.join(root, "lib")
    c10_cuda = os.path.join(lib, "libc10_cuda.so")
    inc = os.path.join(root, "include")
    if not os.path.exists(c10_cuda):
        print("torch %s has no CUDA allocator (%s missing: a CPU-only build)" % (torch.__version__, c10_cuda),
              file=sys.stderr)
        return 1
    if not os.path.exists(os.path.join(inc, "c10", "cuda", "CUDACachingAllocator.h")):
        print("torch %s ships no C++ headers under %s" % (torch.__version__, inc), file=sys.stderr)
        return 1
    print("version=%s" % torch.__version__.split("+")[0])
    print("include=%s" % inc)
    print("lib=%s" % lib)
    print("cxx11_abi=%d" % int(bool(torch.compiled_with_cxx11_abi())))
    print("c10_cuda=%s" % c10_cuda)
    print("build_id=%s" % build_id(c10_cuda))
    print("cuda=%s" % (torch.version.cuda or ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
