// libFuzzer target: measurement reader of `mmgp fit` and validation reader of `mmgp validate` (see targets.hpp).
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    mmgp::fuzz::runs_one(std::string(reinterpret_cast<const char*>(data), size));
    return 0;
}
