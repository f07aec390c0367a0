#!/usr/bin/env python3
"""The `exports` test: libmmgp exports the mmgp namespace and the C advisor API (mmgp_*), nothing else.

A name the library exports outside its namespace can be taken over by a program that defines the same name
(symbol interposition: a handler of the executable once replaced the library's signal handler), and the
library's internal names must not be reachable at all. Reads `nm -D --defined-only LIBRARY` and classifies each
name by its mangled form, whose prefix is the namespace of the name itself (a demangled name begins with the
return type of a template instantiation, so that "mmgp::x const& std::forward<...>" would look like one of ours).
Usage: check_exports.py LIBRARY
"""
import re
import subprocess
import sys

# _ZN/_ZNK: a name (a const member) in namespace mmgp; _ZTV/_ZTI/_ZTS/_ZTT: vtable, typeinfo, its name, VTT.
ALLOWED = re.compile(r"^(_ZNK?4mmgp|_ZT[VIST]N4mmgp|mmgp_)")
# Internal namespaces that must stay hidden even though they are inside mmgp.
HIDDEN = re.compile(r"^mmgp::(detail|fuzz|calib|cli)::|\(anonymous namespace\)")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = subprocess.run(["nm", "-D", "--defined-only", sys.argv[1]], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"nm failed: {out.stderr.strip()}", file=sys.stderr)
        return 1
    mangled = []
    for line in out.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] not in ("A",):  # A: the version node itself
            mangled.append(parts[2])
    demangled = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True).stdout.split("\n")
    if len(demangled) < len(mangled):
        print("c++filt failed", file=sys.stderr)
        return 1
    pairs = list(zip(mangled, demangled))
    names = [d for _, d in pairs]
    bad = [d for m, d in pairs if not ALLOWED.match(m) or HIDDEN.search(d)]
    print(f"{len(names)} exported symbols, {len(bad)} outside the public API")
    for n in bad[:40]:
        print(f"  not public: {n}")
    public = [n for n in names if n.startswith("mmgp::search(") or n.startswith("mmgp_advisor_create")]
    if len(public) < 2:  # an empty or unreadable symbol table must not pass
        print("the public API itself (mmgp::search, mmgp_advisor_create) is not exported")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
