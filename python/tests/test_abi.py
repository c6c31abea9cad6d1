"""The ctypes mirrors match the C structs: sizes from the library itself, and
field names, order and kinds from the public header when the source tree is
at hand ($TILECAST_SOURCE_ROOT or this checkout)."""

import ctypes
import os
import re
import unittest

import tilecast
from tilecast import _lib


def _header_path():
    root = os.environ.get("TILECAST_SOURCE_ROOT") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..")
    path = os.path.join(root, "predictor", "include", "tilecast", "tilecast.h")
    return path if os.path.exists(path) else None


def parse_structs(text):
    """{struct name: [(field, kind)]} for the struct definitions of a header
    written the way tilecast.h is (one declaration list per statement)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    structs = {}
    for m in re.finditer(r"\bstruct\s+(tc_\w+)\s*\{(.*?)\};", text, flags=re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            dm = re.match(r"((?:const\s+)?(?:unsigned\s+)?(?:struct\s+|enum\s+)?\w+)\s+(.*)$", decl)
            base, names = dm.group(1), dm.group(2)
            for name in names.split(","):
                name = name.strip()
                pointer = name.startswith("*")
                name = name.lstrip("* ")
                am = re.match(r"(\w+)\s*(\[.*\])?$", name)
                fields.append((am.group(1), _kind(base, pointer, am.group(2))))
        structs[m.group(1)] = fields
    return structs


def _kind(base, pointer, array):
    if pointer:
        return "pointer"
    if array:
        return "char[]" if base == "char" else "array"
    if base.startswith("enum ") or base == "int":
        return "int"
    if base.startswith("struct "):
        return base.split()[1]
    # int32_t is ctypes' c_int32, which ctypes makes c_int where int has 32 bits
    return {"int64_t": "int64", "int32_t": "int", "double": "double", "bool": "bool",
            "size_t": "size_t", "char": "char", "unsigned char": "uchar"}.get(base, base)


def _ctype_kind(t):
    if issubclass(t, ctypes.Array):
        return "char[]" if t._type_ is ctypes.c_char else "array"
    if t is ctypes.c_char_p or issubclass(t, ctypes._Pointer):
        return "pointer"
    for name, ct in _lib.STRUCTS.items():
        if t is ct:
            return name
    return {ctypes.c_int: "int", ctypes.c_int64: "int64", ctypes.c_double: "double",
            ctypes.c_bool: "bool", ctypes.c_size_t: "size_t",
            ctypes.c_ubyte: "uchar"}.get(t, repr(t))


class TestAbi(unittest.TestCase):
    def test_sizes_match_the_library(self):
        lib = _lib.library()
        for cname, mirror in _lib.STRUCTS.items():
            with self.subTest(struct=cname):
                self.assertEqual(lib.tc_abi_sizeof(cname.encode()), ctypes.sizeof(mirror))
        self.assertEqual(lib.tc_abi_sizeof(b"tc_no_such_struct"), 0)
        self.assertIn("tc_no_such_struct", tilecast.last_error())

    def test_fields_match_the_header(self):
        path = _header_path()
        if not path:
            self.skipTest("public header not found (installed package)")
        with open(path, encoding="utf-8") as f:
            structs = parse_structs(f.read())
        for cname, mirror in _lib.STRUCTS.items():
            with self.subTest(struct=cname):
                self.assertIn(cname, structs)
                mine = [(n, _ctype_kind(t)) for n, t in mirror._fields_]
                self.assertEqual(mine, structs[cname])

    def test_header_parser(self):
        s = parse_structs("struct tc_x { int64_t a, b; char id[4]; /* c */ enum tc_e e;\n"
                          " const char *p; struct tc_y y; bool f; };")
        self.assertEqual(s["tc_x"], [("a", "int64"), ("b", "int64"), ("id", "char[]"),
                                     ("e", "int"), ("p", "pointer"), ("y", "tc_y"),
                                     ("f", "bool")])


if __name__ == "__main__":
    unittest.main()
