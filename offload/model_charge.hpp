// What the model charges one off-load of a process alone on a platform, beyond its work: the part of an
// off-load's round trip that process_profile.cpp leaves out of C_apu, so that the profile's terms give back its
// own sequential runs on that platform. Callers: offload_run_main.cpp (mmgp-offload-run --profile --platform),
// the offload tests.
#pragma once

#include <functional>

#include "mmgp/profile.hpp"

namespace mmgp::kernels {

/// The model's time (the engine's evaluator, the default model) for one off-load of `bytes` bytes by one process
/// with p blocks whose host waits by `pol`, nothing else: O_offload + T_csw (edtlp: the blocked thread's wake-up;
/// none under os, which spins) + the transfer's latency + bytes / bandwidth / p on today's model. The platform is
/// copied in. Throws the evaluator's model_error where the platform cannot be evaluated (bytes > 0 and no transfer
/// cost: the profile could not be predicted on it either).
std::function<double(double bytes, int p)> model_offload_charge(const platform& pl, policy pol = policy::edtlp);

}  // namespace mmgp::kernels
