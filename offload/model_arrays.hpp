// The substitution model as libpll holds it after its eigendecomposition (kernels::site_slice::arrays()): what
// the GPU kernels are given (offload/cuda/likelihood_site.hpp: P(t) = inv_eigenvecs diag(exp(eigenvals r t))
// eigenvecs). Standard library only, so that the CUDA side's headers (device_slice.hpp) take it without libpll.
#pragma once

#include <array>
#include <vector>

namespace mmgp::kernels {

struct model_arrays {
    std::array<double, 16> inv_eigenvecs{}, eigenvecs{};
    std::array<double, 4> eigenvals{}, freqs{};
    std::vector<double> rates, rate_weights;  ///< per rate category
};

}  // namespace mmgp::kernels
