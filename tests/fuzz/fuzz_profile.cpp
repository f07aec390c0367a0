// libFuzzer target: profile parser/validator -> one prediction (see targets.hpp).
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    mmgp::fuzz::profile_one(std::string(reinterpret_cast<const char*>(data), size));
    return 0;
}
