// mmgp/uncertainty.hpp — what the profiles' spreads do to a ranking (mmgp predict --uncertainty).
//
//   auto u = mmgp::propagate_spreads(s, mmgp::model_kind::mmgp, candidates, best.c);
//   for (const auto& x : u.configs) ... x.lo, x.hi, x.p_not_slower
#pragma once

#include "mmgp/export.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "mmgp/model.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// One configuration's prediction over the sampled parameters.
struct interval_prediction {
    configuration c;
    double time_s = 0;        ///< with the profiles' values
    double lo = 0, hi = 0;    ///< the 5th and 95th percentiles over the samples
    double p_not_slower = 0;  ///< fraction of samples in which c is at least as fast as `best`
    /// Fraction of samples in which no other candidate is both at least as fast and at least as cheap in
    /// node-hours (and better in one): c is on the candidates' time-node-hours front.
    double p_on_front = 0;
};

struct uncertainty_report {
    int samples = 0;
    /// The parameters varied: "platform.T_csw: 12.3 % (MAD 1.0e-07 s)"; empty when no spread reached the model.
    std::vector<std::string> parameters;
    /// Spreads of keys the model has no scalar for (e.g. alpha's, written per form): not varied.
    std::vector<std::string> not_varied;
    /// Spreads of scalars whose value is 0: a log-normal draw around 0 is 0, so they are not varied either.
    std::vector<std::string> at_zero;
    std::vector<interval_prediction> configs;  ///< the candidates, in the order given
    /// The candidates that cannot be told apart from `best` at these spreads: at least as fast as `best` in
    /// at least 1 - confidence of the samples (and `best` itself), in the order given.
    std::vector<configuration> indistinguishable;
};

/// Samples the scenario's parameters that carry a spread (parameter_spread: a MAD, taken as 1.4826 x MAD
/// for a standard deviation, or a standard error) independently and log-normally around their values
/// (value x exp(sigma_rel x z), so the median is the value and no sample is negative), evaluates `candidates`
/// (which should hold `best`) on each sample, and reports each one's interval and how often it is at least as
/// fast as `best`. Pure: the samples come from `seed`.
uncertainty_report propagate_spreads(const scenario& s, model_kind kind, const std::vector<configuration>& candidates,
                                     const configuration& best, int samples = 200, double confidence = 0.95,
                                     std::uint64_t seed = 1);

/// Throws what propagate_spreads() would throw for the scenario's spreads (input_error naming the key whose spread
/// is too large to propagate), without sampling: what a command checks before it writes any of its report.
void check_spreads(const scenario& s);

}  // namespace mmgp
MMGP_API_END
