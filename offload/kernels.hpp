// Phylogenetic likelihood kernels on libpll: DNA alignments, the GTR+Γ model, an unrooted
// binary tree whose inner CLVs are oriented towards a focus edge (RAxML's newview/evaluate/makenewz), and
// the per-APU slice of a partition that owns one contiguous site range.
//
//   auto aln = mmgp::kernels::read_alignment("/usr/share/doc/examl/testData/49.gz");   // PHYLIP/FASTA, gz or not
//   auto sim = mmgp::kernels::simulate_alignment(16, 1000, 42);                        // seeded, GTR+Γ4
//   mmgp::kernels::model mdl = mmgp::kernels::default_model(aln);                       // empirical frequencies
//   mmgp::kernels::site_slice s(aln, mdl, 0, aln.sites());                              // libpll partition of sites [0, n)
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <libpll/pll.h>

#include "mmgp/error.hpp"
#include "model_arrays.hpp"

namespace mmgp::kernels {

// Bad input is the project's (mmgp/error.hpp): mmgp::input_error for an alignment that cannot be read or parsed
// (its file and line), mmgp::usage_error for an option or size that cannot be run; both exit status 2. libpll or a
// run that fails throws mmgp::failure (exit status 1).

/// A DNA multiple sequence alignment: `taxa()` rows of `sites()` characters (A, C, G, T, IUPAC codes, -, ?, N).
struct alignment {
    std::string source;               ///< file it was read from, or "simulated ..."
    std::vector<std::string> names;   ///< taxon labels
    std::vector<std::string> rows;    ///< one row per taxon, equal lengths
    std::string true_tree;            ///< Newick of the generating tree (simulated alignments only)
    std::size_t taxa() const { return rows.size(); }
    std::size_t sites() const { return rows.empty() ? 0 : rows.front().size(); }
};

/// Reads a DNA alignment: relaxed sequential PHYLIP ("ntax nsites" then "name sequence...", a sequence may span
/// lines) or FASTA. gzip-compressed files are read transparently (zlib). Throws mmgp::input_error naming the file (and the line).
alignment read_alignment(const std::string& path);
/// Keeps the first `taxa` rows and the first `sites` columns (0 keeps all). Throws mmgp::usage_error when too few.
alignment truncate(const alignment& a, std::size_t taxa, std::size_t sites);
/// Simulates `sites` DNA sites along a random tree of `taxa` leaves (random stepwise addition, branch lengths
/// exponential with mean 0.1) under GTR+Γ4 (rates 1,4,1,1,4,1; frequencies .3,.2,.2,.3; α = 0.8), seeded.
alignment simulate_alignment(std::size_t taxa, std::size_t sites, std::uint64_t seed);

/// Substitution model: GTR exchangeabilities, base frequencies, discrete Γ with `categories` (1 = no Γ).
struct model {
    std::array<double, 6> rates{1, 1, 1, 1, 1, 1};      ///< AC AG AT CG CT GT
    std::array<double, 4> freqs{0.25, 0.25, 0.25, 0.25}; ///< A C G T
    double alpha = 1.0;
    unsigned categories = 1;
};
/// JC69 (equal rates and frequencies), no rate heterogeneity.
model jc69();
/// GTR+Γ4 used by the runtime: rates 1,4,1,1,4,1, empirical base frequencies of `a`, α = 0.8.
model default_model(const alignment& a);

/// An unrooted binary tree on n >= 3 tips. Tips are nodes 0..n-1 (CLV index = tip index), inner nodes
/// n..2n-3 (CLV index = node, scaler index = node - n); edges 0..2n-4 (P-matrix index = edge).
struct tree {
    std::size_t n = 0;
    std::vector<std::array<int, 3>> nbr;   ///< neighbours (tips use nbr[v][0] only; -1 unused)
    std::vector<std::array<int, 3>> nedge; ///< edge id to each neighbour
    std::vector<std::array<int, 2>> ends;  ///< edge -> its two nodes
    std::vector<double> length;            ///< edge -> branch length
    std::size_t nodes() const { return nbr.size(); }
    std::size_t edges() const { return ends.size(); }
    bool is_tip(int v) const { return static_cast<std::size_t>(v) < n; }
    int edge_between(int a, int b) const;
};
/// Walks the edges of `t` depth first from node `root`, each once: visit(v, w, e) for the edge e from v, already
/// reached, to its neighbour w (so a node is always visited before the nodes behind it).
template <class Visit>
void depth_first_edges(const tree& t, int root, Visit&& visit) {
    std::vector<std::pair<int, int>> stack{{root, -1}};  // (node, the neighbour it was reached from)
    while (!stack.empty()) {
        auto [v, from] = stack.back();
        stack.pop_back();
        for (std::size_t k = 0; k < 3; ++k) {
            const int w = t.nbr[static_cast<std::size_t>(v)][k];
            if (w < 0 || w == from) continue;
            visit(v, w, t.nedge[static_cast<std::size_t>(v)][k]);
            stack.emplace_back(w, v);
        }
    }
}
/// A random topology by stepwise addition of tips 0..n-1 on uniformly chosen edges, all lengths `len`.
tree random_tree(std::size_t n, std::uint64_t seed, double len = 0.1);
/// Newick of a tree with the given tip names.
std::string newick(const tree& t, const std::vector<std::string>& names);

/// One libpll operation list plus the P matrices it needs (branch lengths by edge).
struct newview_batch {
    std::vector<pll_operation> ops;
    std::vector<unsigned> matrices;
    std::vector<double> lengths;
};

/// CLV orientation bookkeeping on the host (RAxML's x flags): every inner CLV points to a neighbour; to make the
/// CLVs of both ends of an edge valid, `orient` emits the partial-likelihood updates that are out of date.
struct orientation {
    std::vector<int> toward;  ///< per node: neighbour the CLV is computed towards (-1: invalid)
    explicit orientation(const tree& t) : toward(t.nodes(), -1) {}
    void invalidate() { std::fill(toward.begin(), toward.end(), -1); }
    /// Appends the updates that make node v's CLV point to neighbour w (post-order).
    void orient(const tree& t, int v, int w, newview_batch& out);
};

/// A libpll partition over sites [lo, hi) of an alignment, with the tree's buffers (one per inner node),
/// P matrices (one per edge), scalers and a sumtable. Owned by one APU thread; not thread-safe.
class site_slice {
public:
    site_slice(const alignment& a, const model& m, std::size_t lo, std::size_t hi);
    ~site_slice();
    site_slice(const site_slice&) = delete;
    site_slice& operator=(const site_slice&) = delete;

    std::size_t lo() const { return lo_; }
    std::size_t hi() const { return hi_; }
    /// Site weights (bootstrap counts) for the whole alignment; the slice keeps its range.
    void set_weights(const unsigned* all_sites);
    /// Recomputes the listed P matrices (every APU repeats this: it does not split by sites).
    void update_matrices(const unsigned* matrices, const double* lengths, std::size_t count);
    /// The listed P matrices copied from `from` (same model and tree; a slice of other sites): what
    /// update_matrices would compute, without recomputing it.
    void copy_matrices(const site_slice& from, const unsigned* matrices, std::size_t count);
    /// newview: partial likelihood vectors for the operations.
    void update_partials(const pll_operation* ops, std::size_t count);
    /// evaluate: log-likelihood of the slice at edge (inner, other) with P matrix `matrix`.
    double edge_loglik(int inner, int other, unsigned matrix);
    /// Per-site log-likelihoods (unweighted sites get their value too) at the edge; returns the weighted sum.
    double edge_loglik_persite(int inner, int other, unsigned matrix, std::vector<double>& persite);
    /// makenewz, part 1: the sumtable of edge (inner, other).
    void update_sumtable(int inner, int other);
    /// makenewz, part 2: first and second derivative of the slice's log-likelihood (not its negative) at branch length t.
    std::array<double, 2> derivatives(int inner, int other, double t);
    /// The model's arrays after libpll's eigendecomposition (the same for every slice of one model).
    model_arrays arrays() const;

private:
    int scaler(int v) const;
    std::size_t lo_, hi_, tips_;
    pll_partition* part_ = nullptr;
    double* sumtable_ = nullptr;
    std::vector<unsigned> params_;
};

}  // namespace mmgp::kernels
