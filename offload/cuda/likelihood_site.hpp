// The per-site arithmetic of the off-loaded likelihood kernels (DNA, 4 states, R rate categories), written once
// for the host and the GPU: the CUDA kernels (offload/cuda/device_slice.cu) run it one site per thread (newview:
// one site's rate category per thread), and the host reference (offload/cuda/host_reference.cpp) runs it site by
// site, so that the tests here compare exactly
// the code the GPU runs with libpll's own kernels (tests/offload/test_kernels.cpp) — what a device adds is the
// launch, the grid of p blocks over the sites and the reductions (the gpu suite checks those on a device).
//
// Layouts (one process's share of the sites, site-major): a CLV is [site][rate][4], a tip's CLV the indicator of
// its character's states; a P matrix [rate][4][4] (row: the parent's state); a sumtable [site][rate][4]; a scaler
// one count per site. The model is libpll's after pll_update_eigen: P(t) = A diag(exp(l_m r t)) B with
// A = inv_eigenvecs and B = eigenvecs, as libpll's pll_core_update_pmatrix forms it. Numbers follow libpll
// 0.3.2: a site whose entries are all below 2^-256 is multiplied by 2^256 and its scaler counted up.
// C++17 and no library: nvcc compiles it as well as the host compiler.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define MMGP_HD __host__ __device__
#else
#define MMGP_HD
#endif

namespace mmgp::offload::site {

constexpr int states = 4;
constexpr int max_rates = 16;
constexpr double scale_factor = 115792089237316195423570985008687907853269984665640564039457584007913129639936.0;  // 2^256
constexpr double scale_threshold = 1.0 / scale_factor;

/// One newview operation: a pll_operation's indices (a scaler index of -1: a tip, no scaler).
struct partial_op {
    int parent, parent_scaler, child1, child1_matrix, child1_scaler, child2, child2_matrix, child2_scaler;
};

/// The substitution model as every kernel reads it (host or device memory alike).
struct model_view {
    const double* a = nullptr;       ///< [4][4]: libpll's inv_eigenvecs
    const double* b = nullptr;       ///< [4][4]: libpll's eigenvecs
    const double* lambda = nullptr;  ///< [4]: eigenvalues
    const double* freqs = nullptr;   ///< [4]: base frequencies
    const double* rates = nullptr;   ///< [rate_cats]: the categories' rates
    const double* weights = nullptr; ///< [rate_cats]: the categories' weights
    int rate_cats = 1;
};

/// One entry of the P matrices of branch length t: rate r, row i, column k (the entries are independent: a thread
/// each on the GPU).
MMGP_HD inline double pmatrix_entry(const model_view& m, double t, int r, int i, int k) {
    if (t == 0) return i == k ? 1.0 : 0.0;
    double v = 0;
    for (int j = 0; j < states; ++j) v += m.a[i * states + j] * std::exp(m.lambda[j] * m.rates[r] * t) * m.b[j * states + k];
    return v;
}

/// newview at one site, one rate category r: the parent's 4 entries `out` from the children's CLVs through their P
/// matrices; returns true when every entry is below 2^-256 (the site is scaled when this holds for every category).
MMGP_HD inline bool newview_rate(int r, const double* p1, const double* c1, const double* p2, const double* c2,
                                 double* out) {
    const double* q1 = p1 + r * states * states;
    const double* q2 = p2 + r * states * states;
    bool small = true;
    for (int i = 0; i < states; ++i) {
        double left = 0, right = 0;
        for (int k = 0; k < states; ++k) {
            left += q1[i * states + k] * c1[r * states + k];
            right += q2[i * states + k] * c2[r * states + k];
        }
        out[i] = left * right;
        small = small && out[i] < scale_threshold;
    }
    return small;
}

/// newview at one site: the parent's CLV from its two children's CLVs through their P matrices; returns 1 when
/// the site was scaled (every entry below 2^-256, then multiplied by 2^256), else 0.
MMGP_HD inline unsigned newview_site(int rate_cats, const double* p1, const double* c1, const double* p2,
                                     const double* c2, double* parent) {
    bool small = true;
    for (int r = 0; r < rate_cats; ++r) small = newview_rate(r, p1, c1, p2, c2, parent + r * states) && small;
    if (!small) return 0;
    for (int e = 0; e < rate_cats * states; ++e) parent[e] *= scale_factor;
    return 1;
}

/// evaluate at one site: its log-likelihood at the edge between `clv_p` (through P `pm`) and `clv_c`, with the
/// site's scaling counts of both ends.
MMGP_HD inline double edge_site(const model_view& m, const double* pm, const double* clv_p, const double* clv_c,
                                unsigned scalings) {
    double lk = 0;
    for (int r = 0; r < m.rate_cats; ++r) {
        double rate_lk = 0;
        for (int i = 0; i < states; ++i) {
            double through = 0;
            for (int k = 0; k < states; ++k) through += pm[(r * states + i) * states + k] * clv_c[r * states + k];
            rate_lk += clv_p[r * states + i] * m.freqs[i] * through;
        }
        lk += rate_lk * m.weights[r];
    }
    return std::log(lk) + scalings * std::log(scale_threshold);
}

/// makenewz, part 1, at one site: the sumtable of the edge, the likelihood's terms in the eigenbasis:
/// sum[r][j] = (sum_i freq_i clv_p[r][i] A[i][j]) (sum_k B[j][k] clv_c[r][k]).
MMGP_HD inline void sumtable_site(const model_view& m, const double* clv_p, const double* clv_c, double* sum) {
    for (int r = 0; r < m.rate_cats; ++r)
        for (int j = 0; j < states; ++j) {
            double left = 0, right = 0;
            for (int i = 0; i < states; ++i) {
                left += m.freqs[i] * clv_p[r * states + i] * m.a[i * states + j];
                right += m.b[j * states + i] * clv_c[r * states + i];
            }
            sum[r * states + j] = left * right;
        }
}

/// makenewz, part 2, at one site: the first and second derivative of the site's log-likelihood at branch length
/// t, from its sumtable row.
MMGP_HD inline void derivatives_site(const model_view& m, const double* sum, double t, double& d1, double& d2) {
    double lk = 0, first = 0, second = 0;
    for (int r = 0; r < m.rate_cats; ++r)
        for (int j = 0; j < states; ++j) {
            const double rate = m.lambda[j] * m.rates[r];
            const double term = m.weights[r] * sum[r * states + j] * std::exp(rate * t);
            lk += term;
            first += term * rate;
            second += term * rate * rate;
        }
    d1 = first / lk;
    d2 = second / lk - d1 * d1;
}

/// A tip's CLV entry: 1 where the character's state set (pll_map_nt's bit mask: A 1, C 2, G 4, T 8) holds the
/// state.
MMGP_HD inline double tip_entry(unsigned mask, int state) { return (mask >> state) & 1u ? 1.0 : 0.0; }

}  // namespace mmgp::offload::site
