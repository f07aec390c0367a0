// mmgp/export.hpp — what the shared library exports. libmmgp is built with hidden visibility: only
// the namespaces opened as `namespace mmgp MMGP_EXPORT { ... }` in the headers of this directory (and
// the C API of advisor.h) are visible from outside, so no other program's name can replace one of the
// library's own (symbol interposition), and no internal name can be replaced by a program's.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define MMGP_EXPORT __attribute__((visibility("default")))
#else
#define MMGP_EXPORT
#endif
