// The off-loaded likelihood kernels on the GPU (device_slice.hpp): each off-load a grid of p blocks of 256 threads,
// each block a contiguous p-th of the slice's sites with its threads striding inside it, each site through likelihood_site.hpp's functions (the code the host reference
// runs, checked against libpll there). Sums are reduced in shared memory per block; the blocks' partial sums are
// copied back and added on the host in block order, so a result does not depend on scheduling.
#include "cuda/device_slice.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "mmgp/error.hpp"

namespace mmgp::offload {
namespace {

constexpr int threads = 256;  // the reference block of the GPU harness and workload

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw mmgp::failure(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

template <class T>
T* device_alloc(std::size_t count) {
    void* p = nullptr;
    check(cudaMalloc(&p, count * sizeof(T) + 1), "cudaMalloc");
    return static_cast<T*>(p);
}

struct slice_dims {
    std::size_t sites, tips, span;  // span: doubles of one site's CLV (rates x 4)
};

// Block b of a grid of p takes the sites [b·n/p, (b+1)·n/p) and its threads stride inside them: every block has
// work whenever p <= sites (a grid-wide stride would leave all blocks past ⌈n/256⌉ idle), so the time of a grid of p
// blocks is the program's own curve in p.
__device__ std::size_t first_site(slice_dims d) {
    return d.sites * blockIdx.x / gridDim.x + threadIdx.x;
}
__device__ std::size_t end_site(slice_dims d) {
    return d.sites * (blockIdx.x + 1) / gridDim.x;
}

__device__ const double* clv_of(const double* clv, slice_dims d, int node) {
    return clv + static_cast<std::size_t>(node) * d.sites * d.span;
}

__device__ unsigned scaling_of(const unsigned* scalers, slice_dims d, int node, std::size_t s) {
    return static_cast<std::size_t>(node) < d.tips ? 0u : scalers[(static_cast<std::size_t>(node) - d.tips) * d.sites + s];
}

// Adds `v` of every thread of the block into out[blockIdx.x * stride + slot] (blockDim.x == threads).
__device__ void block_sum(double v, double* out, int stride, int slot) {
    __shared__ double buf[threads];
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int half = threads / 2; half > 0; half /= 2) {
        if (static_cast<int>(threadIdx.x) < half) buf[threadIdx.x] += buf[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x * stride + slot] = buf[0];
    __syncthreads();
}

__global__ void k_pmatrix(site::model_view m, const unsigned* idx, const double* len, int count, double* pm) {
    const int per = m.rate_cats * site::states * site::states;
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= count * per) return;
    const int i = e / per, r = (e % per) / (site::states * site::states), row = (e % 16) / 4, col = e % 4;
    pm[idx[i] * per + (r * site::states + row) * site::states + col] = site::pmatrix_entry(m, len[i], r, row, col);
}

// newview's common parts. The two children's P matrices into shared memory `q` (child 1's, then child 2's); returns
// the doubles of one.
__device__ int load_child_matrices(const site::partial_op& o, int rate_cats, const double* pm, double* q) {
    const int per = rate_cats * site::states * site::states;
    for (int e = threadIdx.x; e < per; e += blockDim.x) {
        q[e] = pm[static_cast<std::size_t>(o.child1_matrix) * per + e];
        q[per + e] = pm[static_cast<std::size_t>(o.child2_matrix) * per + e];
    }
    return per;
}

// The operation's CLVs on the slice.
struct newview_nodes {
    const double *c1, *c2;
    double* parent;
};
__device__ newview_nodes nodes_of(const site::partial_op& o, slice_dims d, double* clv) {
    return {clv_of(clv, d, o.child1), clv_of(clv, d, o.child2), clv + static_cast<std::size_t>(o.parent) * d.sites * d.span};
}

// The parent's scaling count at site s: its children's, plus one when the site was scaled.
__device__ void set_scaler(unsigned* scalers, slice_dims d, const site::partial_op& o, std::size_t s, bool scaled) {
    if (o.parent_scaler >= 0)
        scalers[static_cast<std::size_t>(o.parent_scaler) * d.sites + s] =
            scaling_of(scalers, d, o.child1, s) + scaling_of(scalers, d, o.child2, s) + (scaled ? 1u : 0u);
}

// newview: one thread per site and rate category (its 4 entries), so that a warp reads the children's CLVs as
// contiguous runs of memory; the two P matrices sit in shared memory. A pass of the block takes ⌊256/R⌋ sites; the
// threads of a site agree through shared memory whether every entry is small (then the site is scaled).
__global__ void k_newview(site::partial_op o, slice_dims d, int rate_cats, const double* pm, double* clv, unsigned* scalers) {
    __shared__ double q[2 * site::max_rates * site::states * site::states];
    __shared__ int large[threads];  // per site of the pass: some entry not below the threshold
    const int per = load_child_matrices(o, rate_cats, pm, q);
    const int tile = blockDim.x / rate_cats, j = threadIdx.x / rate_cats, r = threadIdx.x % rate_cats;
    const auto [c1, c2, parent] = nodes_of(o, d, clv);
    const std::size_t end = end_site(d);
    __syncthreads();
    for (std::size_t base = d.sites * blockIdx.x / gridDim.x; base < end; base += tile) {
        const std::size_t s = base + j;
        const bool active = j < tile && s < end;
        double v[site::states];
        bool small = true;
        if (active) small = site::newview_rate(r, q, c1 + s * d.span, q + per, c2 + s * d.span, v);
        if (static_cast<int>(threadIdx.x) < tile) large[threadIdx.x] = 0;
        __syncthreads();
        if (active && !small) large[j] = 1;
        __syncthreads();
        if (active) {
            const bool scaled = large[j] == 0;
            for (int i = 0; i < site::states; ++i) parent[s * d.span + r * site::states + i] = scaled ? v[i] * site::scale_factor : v[i];
            if (r == 0) set_scaler(scalers, d, o, s, scaled);
        }
        __syncthreads();  // large[] is cleared by the next pass
    }
}

// newview as above with no barrier in the loop: the threads of a site are `rate_cats` consecutive lanes of one warp
// (rate_cats a power of two, at most site::max_rates), which agree by shuffles whether every entry is small, and
// each reads its children's 4 entries and writes the parent's 16 bytes at a time. The same arithmetic (site::newview_rate on the
// entries read); chosen by device_slice::set_newview_kernel, measured beside k_newview by mmgp-bench-gpu and checked
// against libpll by mmgp-gpu-likelihood.
__global__ void k_newview_warp(site::partial_op o, slice_dims d, int rate_cats, const double* pm, double* clv,
                               unsigned* scalers) {
    __shared__ double q[2 * site::max_rates * site::states * site::states];
    const int per = load_child_matrices(o, rate_cats, pm, q);
    const int tile = blockDim.x / rate_cats, j = threadIdx.x / rate_cats, r = threadIdx.x % rate_cats;
    const auto [c1, c2, parent] = nodes_of(o, d, clv);
    const std::size_t end = end_site(d);
    const double* q1 = q + r * site::states * site::states;
    const double* q2 = q + per + r * site::states * site::states;
    __syncthreads();
    for (std::size_t base = d.sites * blockIdx.x / gridDim.x; base < end; base += tile) {
        const std::size_t s = base + j;
        const bool active = s < end;
        double v[site::states];
        int large = 0;
        if (active) {
            const double2* a = reinterpret_cast<const double2*>(c1 + s * d.span + r * site::states);
            const double2* b = reinterpret_cast<const double2*>(c2 + s * d.span + r * site::states);
            // Through the read-only cache: this kernel writes only the parent's CLV, never a child's.
            const double2 a01 = __ldg(a), a23 = __ldg(a + 1), b01 = __ldg(b), b23 = __ldg(b + 1);
            const double x[site::states] = {a01.x, a01.y, a23.x, a23.y}, y[site::states] = {b01.x, b01.y, b23.x, b23.y};
            large = site::newview_rate(0, q1, x, q2, y, v) ? 0 : 1;
        }
        for (int lane = 1; lane < rate_cats; lane <<= 1) large |= __shfl_xor_sync(0xffffffffu, large, lane);
        if (active) {
            const double f = large ? 1.0 : site::scale_factor;
            double2* out = reinterpret_cast<double2*>(parent + s * d.span + r * site::states);
            out[0] = make_double2(v[0] * f, v[1] * f);
            out[1] = make_double2(v[2] * f, v[3] * f);
            if (r == 0) set_scaler(scalers, d, o, s, !large);
        }
    }
}

__global__ void k_edge(site::model_view m, slice_dims d, int inner, int other, const double* pm, const double* clv,
                       const unsigned* scalers, const unsigned* weights, double* partial) {
    double sum = 0;
    for (std::size_t s = first_site(d), end = end_site(d); s < end; s += blockDim.x)
        sum += weights[s] * site::edge_site(m, pm, clv_of(clv, d, inner) + s * d.span, clv_of(clv, d, other) + s * d.span,
                                            scaling_of(scalers, d, inner, s) + scaling_of(scalers, d, other, s));
    block_sum(sum, partial, 1, 0);
}

__global__ void k_sumtable(site::model_view m, slice_dims d, int inner, int other, const double* clv, double* table) {
    for (std::size_t s = first_site(d), end = end_site(d); s < end; s += blockDim.x)
        site::sumtable_site(m, clv_of(clv, d, inner) + s * d.span, clv_of(clv, d, other) + s * d.span, table + s * d.span);
}

__global__ void k_derivatives(site::model_view m, slice_dims d, double t, const double* table, const unsigned* weights,
                              double* partial) {
    double first = 0, second = 0;
    for (std::size_t s = first_site(d), end = end_site(d); s < end; s += blockDim.x) {
        double f = 0, g = 0;
        site::derivatives_site(m, table + s * d.span, t, f, g);
        first += weights[s] * f;
        second += weights[s] * g;
    }
    block_sum(first, partial, 2, 0);
    block_sum(second, partial, 2, 1);
}

__global__ void k_empty() {}

// The middle value of v (the upper one of an even count).
double middle(std::vector<double> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

}  // namespace

struct device_slice::impl {
    slice_dims d{};
    int rate_cats = 0, blocks = 1;
    bool warp_newview = false;  // k_newview_warp instead of k_newview (set_newview_kernel; the constructor's choice)
    std::size_t edges = 0;
    double *model = nullptr, *clv = nullptr, *pm = nullptr, *table = nullptr, *partial = nullptr, *len = nullptr;
    unsigned *scalers = nullptr, *weights = nullptr, *idx = nullptr;
    std::vector<double> host_partial;
    site::model_view view{};
    kernel_times times;
    bool timed = false;
    cudaEvent_t start = nullptr, stop = nullptr;

    ~impl() {
        for (void* p : {static_cast<void*>(model), static_cast<void*>(clv), static_cast<void*>(pm), static_cast<void*>(table),
                        static_cast<void*>(partial), static_cast<void*>(len), static_cast<void*>(scalers),
                        static_cast<void*>(weights), static_cast<void*>(idx)})
            if (p) cudaFree(p);
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
    }
    void copied(std::size_t bytes) { times.bytes += static_cast<long long>(bytes); }
    // Marks the start of a call's kernels (when timed).
    void begin() {
        if (timed) check(cudaEventRecord(start), "cudaEventRecord");
    }
    // The blocks' partial sums, `per_block` each, added in block order.
    std::array<double, 2> gather(int per_block) {
        host_partial.assign(static_cast<std::size_t>(blocks) * per_block, 0.0);
        check(cudaMemcpy(host_partial.data(), partial, host_partial.size() * sizeof(double), cudaMemcpyDeviceToHost),
              "cudaMemcpy (partial sums)");
        copied(host_partial.size() * sizeof(double));
        std::array<double, 2> out{0, 0};
        for (int b = 0; b < blocks; ++b)
            for (int k = 0; k < per_block; ++k) out[static_cast<std::size_t>(k)] += host_partial[static_cast<std::size_t>(b * per_block + k)];
        return out;
    }
    // After a call's kernels: waits for them and, when timed, adds their device time to `into`.
    void launched(const char* what, double kernel_times::*into = &kernel_times::split_s) {
        check(cudaGetLastError(), what);
        if (timed) check(cudaEventRecord(stop), "cudaEventRecord");
        check(cudaDeviceSynchronize(), what);
        if (!timed) return;
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        times.*into += 1e-3 * ms;
        ++(into == &kernel_times::serial_s ? times.serial_calls : times.split_calls);
    }
};

device_slice::device_slice(const std::vector<std::vector<unsigned char>>& tip_masks, const kernels::model_arrays& m,
                           std::size_t edges, int blocks)
    : d_(std::make_unique<impl>()) {
    auto& x = *d_;
    if (tip_masks.size() < 3 || tip_masks[0].empty()) throw std::logic_error("device_slice: at least 3 tips and 1 site");
    if (m.rates.empty() || m.rates.size() > static_cast<std::size_t>(site::max_rates) || m.rate_weights.size() != m.rates.size())
        throw std::logic_error("device_slice: 1 to 16 rate categories, each with its weight");
    x.rate_cats = static_cast<int>(m.rates.size());
    x.d = {tip_masks[0].size(), tip_masks.size(), m.rates.size() * site::states};
    x.edges = edges;
    set_blocks(blocks);
    // Warp shuffles where they take the rate categories: equal to libpll as the shared-memory kernel is (1.09e-13
    // relative, mmgp-gpu-likelihood) and faster (2,500 against 2,024 GB/s at 10^6 sites on an H200, mmgp-bench-gpu;
    // validation/gpu/h200-2026-11-30-*/check.log).
    set_newview_kernel(newview_kernel::warp_shuffle);
    // The model: a, b, lambda, freqs, rates, weights in one buffer.
    std::vector<double> host_model(m.inv_eigenvecs.begin(), m.inv_eigenvecs.end());
    host_model.insert(host_model.end(), m.eigenvecs.begin(), m.eigenvecs.end());
    host_model.insert(host_model.end(), m.eigenvals.begin(), m.eigenvals.end());
    host_model.insert(host_model.end(), m.freqs.begin(), m.freqs.end());
    host_model.insert(host_model.end(), m.rates.begin(), m.rates.end());
    host_model.insert(host_model.end(), m.rate_weights.begin(), m.rate_weights.end());
    x.model = device_alloc<double>(host_model.size());
    check(cudaMemcpy(x.model, host_model.data(), host_model.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy (model)");
    x.view = {x.model, x.model + 16, x.model + 32, x.model + 36, x.model + 40, x.model + 40 + x.rate_cats, x.rate_cats};
    // CLVs of every node (tips: indicators of their states), scalers, P matrices, weights, sumtable.
    const std::size_t nodes = 2 * x.d.tips - 2, sites = x.d.sites, span = x.d.span;
    std::vector<double> tips(x.d.tips * sites * span);
    for (std::size_t t = 0; t < x.d.tips; ++t) {
        if (tip_masks[t].size() != sites) throw std::logic_error("device_slice: tips of different lengths");
        for (std::size_t s = 0; s < sites; ++s)
            for (std::size_t e = 0; e < span; ++e)
                tips[(t * sites + s) * span + e] = site::tip_entry(tip_masks[t][s], static_cast<int>(e % site::states));
    }
    x.clv = device_alloc<double>(nodes * sites * span);
    check(cudaMemcpy(x.clv, tips.data(), tips.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy (tips)");
    x.scalers = device_alloc<unsigned>((x.d.tips - 2) * sites);
    check(cudaMemset(x.scalers, 0, (x.d.tips - 2) * sites * sizeof(unsigned)), "cudaMemset (scalers)");
    x.pm = device_alloc<double>(edges * span * site::states);
    x.table = device_alloc<double>(sites * span);
    x.weights = device_alloc<unsigned>(sites);
    std::vector<unsigned> ones(sites, 1);
    set_weights(ones.data());
    x.idx = device_alloc<unsigned>(edges);
    x.len = device_alloc<double>(edges);
}

device_slice::~device_slice() = default;

void device_slice::set_blocks(int blocks) {
    auto& x = *d_;
    if (blocks < 1) throw std::logic_error("device_slice: at least one block");
    if (blocks > x.blocks || !x.partial) {
        if (x.partial) cudaFree(x.partial);
        x.partial = device_alloc<double>(2 * static_cast<std::size_t>(blocks));
    }
    x.blocks = blocks;
}

int device_slice::blocks() const { return d_->blocks; }

void device_slice::set_weights(const unsigned* slice_weights) {
    check(cudaMemcpy(d_->weights, slice_weights, d_->d.sites * sizeof(unsigned), cudaMemcpyHostToDevice), "cudaMemcpy (weights)");
    d_->copied(d_->d.sites * sizeof(unsigned));
}

void device_slice::update_matrices(const unsigned* matrices, const double* lengths, std::size_t count) {
    auto& x = *d_;
    if (count == 0) return;
    if (count > x.edges) throw std::logic_error("device_slice: more P matrices than edges");
    check(cudaMemcpy(x.idx, matrices, count * sizeof(unsigned), cudaMemcpyHostToDevice), "cudaMemcpy (matrix indices)");
    check(cudaMemcpy(x.len, lengths, count * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy (branch lengths)");
    x.copied(count * (sizeof(unsigned) + sizeof(double)));
    const int entries = static_cast<int>(count) * x.rate_cats * site::states * site::states;
    x.begin();
    k_pmatrix<<<(entries + threads - 1) / threads, threads>>>(x.view, x.idx, x.len, static_cast<int>(count), x.pm);
    x.launched("P matrices", &kernel_times::serial_s);
}

void device_slice::update_partials(const std::vector<site::partial_op>& ops) {
    auto& x = *d_;
    x.begin();
    for (const auto& o : ops) {
        if (x.warp_newview)
            k_newview_warp<<<x.blocks, threads>>>(o, x.d, x.rate_cats, x.pm, x.clv, x.scalers);
        else
            k_newview<<<x.blocks, threads>>>(o, x.d, x.rate_cats, x.pm, x.clv, x.scalers);
    }
    x.launched("newview");
}

double device_slice::edge_loglik(int inner, int other, unsigned matrix) {
    auto& x = *d_;
    const std::size_t per = static_cast<std::size_t>(x.rate_cats) * site::states * site::states;
    x.begin();
    k_edge<<<x.blocks, threads>>>(x.view, x.d, inner, other, x.pm + matrix * per, x.clv, x.scalers, x.weights, x.partial);
    x.launched("evaluate");
    return x.gather(1)[0];
}

void device_slice::update_sumtable(int inner, int other) {
    auto& x = *d_;
    x.begin();
    k_sumtable<<<x.blocks, threads>>>(x.view, x.d, inner, other, x.clv, x.table);
    x.launched("sumtable");
}

std::array<double, 2> device_slice::derivatives(int, int, double t) {
    auto& x = *d_;
    x.begin();
    k_derivatives<<<x.blocks, threads>>>(x.view, x.d, t, x.table, x.weights, x.partial);
    x.launched("derivatives");
    return x.gather(2);
}

void device_slice::time_kernels(bool on) {
    auto& x = *d_;
    if (on && !x.start) {
        check(cudaEventCreate(&x.start), "cudaEventCreate");
        check(cudaEventCreate(&x.stop), "cudaEventCreate");
        const kernel_times before = x.times;
        std::vector<double> spans;
        x.timed = true;
        for (int r = 0; r < 55; ++r) {  // 5 warm-up spans
            const double t0 = x.times.split_s;
            x.begin();
            k_empty<<<1, 1>>>();
            x.launched("empty grid");
            if (r >= 5) spans.push_back(x.times.split_s - t0);
        }
        x.times = before;
        x.times.span_overhead_s = middle(spans);
    }
    x.timed = on;
}

kernel_times device_slice::times() const {
    kernel_times t = d_->times;
    t.split_s = std::max(0.0, t.split_s - static_cast<double>(t.split_calls) * t.span_overhead_s);
    t.serial_s = std::max(0.0, t.serial_s - static_cast<double>(t.serial_calls) * t.span_overhead_s);
    return t;
}

bool device_slice::set_newview_kernel(newview_kernel k) {
    auto& x = *d_;
    const int r = x.rate_cats;
    // A power of two up to the rate categories a slice holds (at most 16, k_newview_warp's shared matrices): a site's
    // lanes are an aligned group within one warp.
    static_assert(site::max_rates <= 32);
    const bool fits = r >= 1 && r <= site::max_rates && (r & (r - 1)) == 0;
    x.warp_newview = k == newview_kernel::warp_shuffle && fits;
    return k == newview_kernel::shared_memory || fits;
}

double device_slice::empty_roundtrip(int reps) const {
    std::vector<double> t;
    for (int r = 0; r < reps + 5; ++r) {  // 5 warm-up launches
        const auto t0 = std::chrono::steady_clock::now();
        k_empty<<<1, 1>>>();
        check(cudaDeviceSynchronize(), "empty grid");
        if (r >= 5) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return middle(t);
}

double device_slice::copy_bandwidth(std::size_t bytes) {
    char *a = device_alloc<char>(bytes), *b = device_alloc<char>(bytes);
    cudaEvent_t t0, t1;
    check(cudaEventCreate(&t0), "cudaEventCreate");
    check(cudaEventCreate(&t1), "cudaEventCreate");
    float best = 0;
    for (int r = 0; r < 6; ++r) {  // the first a warm-up
        check(cudaEventRecord(t0), "cudaEventRecord");
        check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy (device to device)");
        check(cudaEventRecord(t1), "cudaEventRecord");
        check(cudaEventSynchronize(t1), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime");
        if (r > 0 && (best == 0 || ms < best)) best = ms;
    }
    cudaEventDestroy(t0), cudaEventDestroy(t1), cudaFree(a), cudaFree(b);
    return best > 0 ? 2.0 * static_cast<double>(bytes) / (1e-3 * best) : 0;
}

void device_slice::set_host_wait(bool block) {
    check(cudaSetDeviceFlags(block ? cudaDeviceScheduleBlockingSync : cudaDeviceScheduleSpin), "cudaSetDeviceFlags");
}

int device_slice::usable_devices() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
}

int device_slice::multiprocessors() {
    int sms = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
    return sms;
}

}  // namespace mmgp::offload
