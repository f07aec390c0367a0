// mmgp/export.hpp — what the shared library exports. libmmgp is built with hidden visibility: only the
// declarations of the headers in this directory, each wrapped in MMGP_API_BEGIN ... MMGP_API_END, (and the
// C API of advisor.h) are visible from outside, so no other program's name can replace one of the library's
// own (symbol interposition), and no internal name can be reached. The pragma form works with GCC and Clang
// alike (Clang ignores a visibility attribute on a namespace for definitions in a later block of it).
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define MMGP_API_BEGIN _Pragma("GCC visibility push(default)")
#define MMGP_API_END _Pragma("GCC visibility pop")
#else
#define MMGP_API_BEGIN
#define MMGP_API_END
#endif
