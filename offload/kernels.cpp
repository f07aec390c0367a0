// libpll kernels: alignments, the model, the tree with oriented CLVs, and one APU's site slice.
#include "kernels.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <zlib.h>


namespace mmgp::kernels {

namespace {

// zlib's message for the file at `path`, without the file's name it starts with (the error names it once).
std::string zlib_message(gzFile f, const std::string& path, int& err) {
    std::string msg = gzerror(f, &err);
    if (msg.rfind(path + ": ", 0) == 0) msg.erase(0, path.size() + 2);
    return msg;
}

std::string read_all(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) throw input_error(path, "(file)", "an alignment file that can be opened", std::strerror(errno));
    std::string text;
    char buf[1 << 16];
    for (;;) {
        int n = gzread(f, buf, sizeof buf);
        if (n < 0) {
            int err = 0;
            const std::string msg = zlib_message(f, path, err);
            gzclose(f);
            throw input_error(path, "(file)", "an alignment file that can be read", msg);
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        // The bound stops a stream without end (/dev/zero) within a second, far above any alignment a profile
        // run could use (each bootstrap reads it all).
        if (text.size() > (std::size_t{256} << 20)) {
            gzclose(f);
            throw input_error(path, "(file)", "an alignment of at most 256 MiB", "a larger file or a stream without end");
        }
    }
    // A compressed file cut short reads as its first part and then ends: zlib says so at the end of the reading
    // (gzerror) or as the file is closed (Z_BUF_ERROR), and the part read is not taken for the alignment.
    int err = Z_OK;
    const std::string msg = zlib_message(f, path, err);
    const int closed = gzclose(f);
    if (err != Z_OK && err != Z_STREAM_END)
        throw input_error(path, "(file)", "an alignment file that can be read", msg);
    if (closed == Z_BUF_ERROR)
        throw input_error(path, "(file)", "a whole compressed file", "one that ends in the middle of its stream (cut short)");
    if (closed != Z_OK) throw input_error(path, "(file)", "an alignment file that can be read", "an error as it was closed");
    return text;
}

// A token as text a terminal shows on one line: printable ASCII as it is, other bytes as \xNN, at most 40 shown.
std::string shown_token(const std::string& t) {
    std::string out = "\"";
    for (std::size_t k = 0; k < t.size() && k < 40; ++k) {
        const unsigned char c = static_cast<unsigned char>(t[k]);
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            out += static_cast<char>(c);
        } else {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        }
    }
    return out + (t.size() > 40 ? "\"..." : "\"");
}

std::string shown(char c) {
    if (std::isprint(static_cast<unsigned char>(c))) return std::string("'") + c + "'";
    char b[16];
    std::snprintf(b, sizeof b, "byte 0x%02x", static_cast<unsigned char>(c));
    return b;
}

struct cursor {
    const std::string& s;
    const std::string& file;
    std::size_t i = 0;
    std::size_t line = 1;
    void skip_ws() {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) {
            if (s[i] == '\n') ++line;
            ++i;
        }
    }
    bool eof() {
        skip_ws();
        return i >= s.size();
    }
    [[noreturn]] void fail(const std::string& expected, const std::string& found) const {
        throw input_error(file, "line " + std::to_string(line), expected, found);
    }
    std::string token() {
        skip_ws();
        std::size_t b = i;
        while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
        return s.substr(b, i - b);
    }
    long integer(const char* what) {
        std::string t = token();
        if (t.empty()) fail(what, "the end of the file");
        for (char c : t)
            if (!std::isdigit(static_cast<unsigned char>(c))) fail(what, shown_token(t));
        if (t.size() > 9) fail(what, shown_token(t) + " (too large)");
        return std::stol(t);
    }
};

void check_state(cursor& c, char ch) {
    if (pll_map_nt[static_cast<unsigned char>(ch)] == 0)
        c.fail("a DNA character (ACGT, IUPAC, -, ?)", shown(ch));
}

alignment parse_phylip(const std::string& text, const std::string& path) {
    cursor c{text, path};
    alignment a;
    a.source = path;
    long ntax = c.integer("the PHYLIP header \"taxa sites\"");
    long nsites = c.integer("the number of sites in the PHYLIP header");
    if (ntax < 3) c.fail("at least 3 taxa", std::to_string(ntax));
    if (nsites < 1) c.fail("at least 1 site", std::to_string(nsites));
    for (long t = 0; t < ntax; ++t) {
        std::string name = c.token();
        if (name.empty()) c.fail("taxon " + std::to_string(t + 1) + " of " + std::to_string(ntax), "the end of the file");
        std::string row;
        row.reserve(static_cast<std::size_t>(nsites));
        while (row.size() < static_cast<std::size_t>(nsites)) {
            c.skip_ws();
            if (c.i >= text.size())
                c.fail(std::to_string(nsites) + " sites for taxon " + name,
                       std::to_string(row.size()) + " (interleaved PHYLIP is not supported)");
            char ch = text[c.i++];
            check_state(c, ch);
            row.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(ch))));
        }
        a.names.push_back(name);
        a.rows.push_back(std::move(row));
    }
    if (!c.eof()) c.fail("the end of the file after " + std::to_string(ntax) + " taxa", shown_token(c.token()));
    return a;
}

alignment parse_fasta(const std::string& text, const std::string& path) {
    cursor c{text, path};
    alignment a;
    a.source = path;
    while (!c.eof()) {
        if (text[c.i] != '>') c.fail("'>' starting a FASTA header", shown(text[c.i]));
        std::size_t e = text.find('\n', c.i);
        if (e == std::string::npos) e = text.size();
        std::string name = text.substr(c.i + 1, e - c.i - 1);
        while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
        if (name.empty()) c.fail("a taxon name after '>'", "an empty header");
        c.i = e;
        std::string row;
        for (;;) {
            c.skip_ws();
            if (c.i >= text.size() || text[c.i] == '>') break;
            check_state(c, text[c.i]);
            row.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(text[c.i++]))));
        }
        if (!a.rows.empty() && row.size() != a.rows.front().size())
            c.fail(std::to_string(a.rows.front().size()) + " sites for taxon " + name + " (an alignment)",
                   std::to_string(row.size()));
        if (row.empty()) c.fail("a sequence for taxon " + name, "none");
        a.names.push_back(name);
        a.rows.push_back(std::move(row));
    }
    if (a.rows.size() < 3) c.fail("at least 3 sequences", std::to_string(a.rows.size()));
    return a;
}

void check(int ok, const char* what) {
    if (!ok) throw mmgp::failure(std::string("libpll: ") + what + ": " + pll_errmsg);
}

// SSE3, not AVX/AVX2: libpll 0.3.2's AVX/AVX2 pll_compute_likelihood_derivatives mishandles pattern weights (with
// bootstrap weights its derivatives disagree with finite differences of the log-likelihood and change with the
// site split; tests/"makenewz ... weights" in test_kernels.cpp catches it). The CPU and SSE kernels agree.
unsigned arch_attribute() {
    if (PLL_STAT(sse3_present)) return PLL_ATTRIB_ARCH_SSE;
    return PLL_ATTRIB_ARCH_CPU;
}

}  // namespace

alignment read_alignment(const std::string& path) {
    std::string text = read_all(path);
    std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) throw input_error(path, "(file)", "a PHYLIP or FASTA alignment", "an empty file");
    return text[first] == '>' ? parse_fasta(text, path) : parse_phylip(text, path);
}

alignment truncate(const alignment& a, std::size_t taxa, std::size_t sites) {
    alignment r = a;
    if (taxa) {
        if (taxa < 3 || taxa > a.taxa())
            throw usage_error(a.source + ": expected 3.." + std::to_string(a.taxa()) + " taxa to keep, found " +
                              std::to_string(taxa));
        r.names.resize(taxa);
        r.rows.resize(taxa);
        r.true_tree.clear();
    }
    if (sites) {
        if (sites > a.sites())
            throw usage_error(a.source + ": expected at most " + std::to_string(a.sites()) + " sites to keep, found " +
                              std::to_string(sites));
        for (auto& row : r.rows) row.resize(sites);
    }
    return r;
}

model jc69() { return model{}; }

model default_model(const alignment& a) {
    model m;
    m.rates = {1, 4, 1, 1, 4, 1};
    m.alpha = 0.8;
    m.categories = 4;
    std::array<double, 4> cnt{1, 1, 1, 1};  // pseudo-counts keep every frequency positive
    for (const auto& row : a.rows)
        for (char ch : row) switch (ch) {
                case 'A': cnt[0] += 1; break;
                case 'C': cnt[1] += 1; break;
                case 'G': cnt[2] += 1; break;
                case 'T': case 'U': cnt[3] += 1; break;
                default: break;
            }
    double s = cnt[0] + cnt[1] + cnt[2] + cnt[3];
    for (int i = 0; i < 4; ++i) m.freqs[static_cast<std::size_t>(i)] = cnt[static_cast<std::size_t>(i)] / s;
    return m;
}

// ---- tree -------------------------------------------------------------------------------------------

int tree::edge_between(int a, int b) const {
    for (int k = 0; k < 3; ++k)
        if (nbr[static_cast<std::size_t>(a)][static_cast<std::size_t>(k)] == b)
            return nedge[static_cast<std::size_t>(a)][static_cast<std::size_t>(k)];
    throw std::logic_error("tree: nodes are not adjacent");
}

tree random_tree(std::size_t n, std::uint64_t seed, double len) {
    if (n < 3) throw usage_error("a tree needs at least 3 taxa, found " + std::to_string(n));
    tree t;
    t.n = n;
    const std::size_t nodes = 2 * n - 2;
    t.nbr.assign(nodes, {-1, -1, -1});
    t.nedge.assign(nodes, {-1, -1, -1});
    auto link = [&](int a, int b, int e) {
        auto put = [&](int x, int y) {
            for (std::size_t k = 0; k < 3; ++k)
                if (t.nbr[static_cast<std::size_t>(x)][k] == -1) {
                    t.nbr[static_cast<std::size_t>(x)][k] = y;
                    t.nedge[static_cast<std::size_t>(x)][k] = e;
                    return;
                }
            throw std::logic_error("tree: node degree exceeded");
        };
        put(a, b);
        put(b, a);
        t.ends[static_cast<std::size_t>(e)] = {a, b};
    };
    auto unlink = [&](int a, int b) {
        for (int x : {a, b}) {
            int y = x == a ? b : a;
            for (std::size_t k = 0; k < 3; ++k)
                if (t.nbr[static_cast<std::size_t>(x)][k] == y) {
                    t.nbr[static_cast<std::size_t>(x)][k] = -1;
                    t.nedge[static_cast<std::size_t>(x)][k] = -1;
                }
        }
    };
    t.ends.assign(2 * n - 3, {-1, -1});
    t.length.assign(2 * n - 3, len);
    std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
    // star of tips 0, 1, 2 around inner node n
    const int c = static_cast<int>(n);
    link(0, c, 0);
    link(1, c, 1);
    link(2, c, 2);
    int next_edge = 3, next_inner = c + 1;
    for (std::size_t tip = 3; tip < n; ++tip) {
        std::uniform_int_distribution<int> pick(0, next_edge - 1);
        int e = pick(rng);
        auto [a, b] = t.ends[static_cast<std::size_t>(e)];
        unlink(a, b);
        int v = next_inner++;
        link(a, v, e);
        link(b, v, next_edge++);
        link(static_cast<int>(tip), v, next_edge++);
    }
    return t;
}

std::string newick(const tree& t, const std::vector<std::string>& names) {
    std::function<std::string(int, int)> rec = [&](int v, int from) -> std::string {
        if (t.is_tip(v)) return names.at(static_cast<std::size_t>(v));
        std::string s = "(";
        bool first = true;
        for (std::size_t k = 0; k < 3; ++k) {
            int w = t.nbr[static_cast<std::size_t>(v)][k];
            if (w == from || w < 0) continue;
            if (!first) s += ",";
            first = false;
            char b[32];
            std::snprintf(b, sizeof b, ":%.6g", t.length[static_cast<std::size_t>(t.nedge[static_cast<std::size_t>(v)][k])]);
            s += rec(w, v) + b;
        }
        return s + ")";
    };
    int c = t.nbr[0][0];
    char b[32];
    std::snprintf(b, sizeof b, ":%.6g", t.length[static_cast<std::size_t>(t.nedge[0][0])]);
    std::string inner = rec(c, 0);  // "(x,y)"
    return "(" + names.at(0) + b + "," + inner.substr(1) + ";";
}

void orientation::orient(const tree& t, int v, int w, newview_batch& out) {
    if (t.is_tip(v) || toward[static_cast<std::size_t>(v)] == w) return;
    int ch[2], ce[2], k2 = 0;
    for (std::size_t k = 0; k < 3; ++k) {
        int x = t.nbr[static_cast<std::size_t>(v)][k];
        if (x == w) continue;
        ch[k2] = x;
        ce[k2] = t.nedge[static_cast<std::size_t>(v)][k];
        ++k2;
    }
    if (k2 != 2) throw std::logic_error("orient: w is not a neighbour of v");
    orient(t, ch[0], v, out);
    orient(t, ch[1], v, out);
    const int n = static_cast<int>(t.n);
    pll_operation_t op;
    op.parent_clv_index = static_cast<unsigned>(v);
    op.parent_scaler_index = v - n;
    op.child1_clv_index = static_cast<unsigned>(ch[0]);
    op.child1_matrix_index = static_cast<unsigned>(ce[0]);
    op.child1_scaler_index = ch[0] < n ? PLL_SCALE_BUFFER_NONE : ch[0] - n;
    op.child2_clv_index = static_cast<unsigned>(ch[1]);
    op.child2_matrix_index = static_cast<unsigned>(ce[1]);
    op.child2_scaler_index = ch[1] < n ? PLL_SCALE_BUFFER_NONE : ch[1] - n;
    out.ops.push_back(op);
    for (int e : ce) {
        out.matrices.push_back(static_cast<unsigned>(e));
        out.lengths.push_back(t.length[static_cast<std::size_t>(e)]);
    }
    toward[static_cast<std::size_t>(v)] = w;
}

// ---- simulation -------------------------------------------------------------------------------------

alignment simulate_alignment(std::size_t taxa, std::size_t sites, std::uint64_t seed) {
    if (taxa < 3) throw usage_error("--simulate: expected at least 3 taxa, found " + std::to_string(taxa));
    if (sites < 1) throw usage_error("--simulate: expected at least 1 site, found 0");
    std::mt19937_64 rng(seed);
    tree t = random_tree(taxa, seed + 1);
    std::exponential_distribution<double> blen(10.0);  // mean 0.1
    for (double& l : t.length) l = std::max(1e-3, blen(rng));
    model m;
    m.rates = {1, 4, 1, 1, 4, 1};
    m.freqs = {0.3, 0.2, 0.2, 0.3};
    m.alpha = 0.8;
    m.categories = 4;
    // P matrices from libpll (one tiny partition: the edges' matrices, every category)
    pll_partition_t* p = pll_partition_create(2, 0, 4, 1, 1, static_cast<unsigned>(t.edges()), m.categories, 0, PLL_ATTRIB_ARCH_CPU);
    if (!p) throw mmgp::failure(std::string("libpll: pll_partition_create: ") + pll_errmsg);
    std::vector<double> cr(m.categories);
    pll_compute_gamma_cats(m.alpha, m.categories, cr.data(), PLL_GAMMA_RATES_MEAN);
    pll_set_subst_params(p, 0, m.rates.data());
    pll_set_frequencies(p, 0, m.freqs.data());
    pll_set_category_rates(p, cr.data());
    std::vector<unsigned> params(m.categories, 0), idx(t.edges());
    for (std::size_t e = 0; e < t.edges(); ++e) idx[e] = static_cast<unsigned>(e);
    int ok = pll_update_prob_matrices(p, params.data(), idx.data(), t.length.data(), static_cast<unsigned>(t.edges()));
    if (!ok) {
        pll_partition_destroy(p);
        throw mmgp::failure(std::string("libpll: pll_update_prob_matrices: ") + pll_errmsg);
    }
    const unsigned sp = p->states_padded;
    static const char base[4] = {'A', 'C', 'G', 'T'};
    std::vector<std::string> rows(taxa, std::string(sites, 'N'));
    std::vector<int> state(t.nodes());
    std::uniform_int_distribution<unsigned> cat(0, m.categories - 1);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    auto draw = [&](const double* probs) {
        double x = u(rng), acc = 0;
        for (int k = 0; k < 3; ++k) {
            acc += probs[k];
            if (x < acc) return k;
        }
        return 3;
    };
    const int root = static_cast<int>(taxa);  // an inner node
    for (std::size_t s = 0; s < sites; ++s) {
        unsigned c = cat(rng);
        state[static_cast<std::size_t>(root)] = draw(m.freqs.data());
        // pre-order from the root: each node's state drawn from its parent's
        depth_first_edges(t, root, [&](int v, int w, int e) {
            const double* P = p->pmatrix[e] + c * 4 * sp + static_cast<unsigned>(state[static_cast<std::size_t>(v)]) * sp;
            state[static_cast<std::size_t>(w)] = draw(P);
        });
        for (std::size_t i = 0; i < taxa; ++i) rows[i][s] = base[state[i]];
    }
    pll_partition_destroy(p);
    alignment a;
    a.source = "simulated " + std::to_string(taxa) + " taxa x " + std::to_string(sites) + " sites, GTR+G4, seed " +
               std::to_string(seed);
    for (std::size_t i = 0; i < taxa; ++i) a.names.push_back(std::string(1, 'T').append(std::to_string(i + 1)));
    a.rows = std::move(rows);
    a.true_tree = newick(t, a.names);
    return a;
}

// ---- site slice -------------------------------------------------------------------------------------

site_slice::site_slice(const alignment& a, const model& m, std::size_t lo, std::size_t hi)
    : lo_(lo), hi_(hi), tips_(a.taxa()) {
    if (lo >= hi || hi > a.sites()) throw std::logic_error("site_slice: empty or out-of-range site range");
    const unsigned n = static_cast<unsigned>(a.taxa());
    const unsigned sites = static_cast<unsigned>(hi - lo);
    part_ = pll_partition_create(n, n - 2, 4, sites, 1, 2 * n - 3, m.categories, n - 2,
                                 PLL_ATTRIB_PATTERN_TIP | arch_attribute());
    if (!part_) throw mmgp::failure(std::string("libpll: pll_partition_create: ") + pll_errmsg);
    try {
        for (unsigned i = 0; i < n; ++i) {
            std::string row = a.rows[i].substr(lo, hi - lo);
            check(pll_set_tip_states(part_, i, pll_map_nt, row.c_str()), "pll_set_tip_states");
        }
        pll_set_subst_params(part_, 0, m.rates.data());
        pll_set_frequencies(part_, 0, m.freqs.data());
        std::vector<double> cr(m.categories, 1.0);
        if (m.categories > 1) check(pll_compute_gamma_cats(m.alpha, m.categories, cr.data(), PLL_GAMMA_RATES_MEAN), "pll_compute_gamma_cats");
        pll_set_category_rates(part_, cr.data());
        params_.assign(m.categories, 0);
        check(pll_update_eigen(part_, 0), "pll_update_eigen");
        std::size_t bytes = std::size_t{sites} * m.categories * part_->states_padded * sizeof(double);
        sumtable_ = static_cast<double*>(pll_aligned_alloc(bytes, part_->alignment));
        if (!sumtable_) throw std::bad_alloc();
        std::memset(sumtable_, 0, bytes);
    } catch (...) {
        pll_partition_destroy(part_);
        throw;
    }
}

site_slice::~site_slice() {
    if (sumtable_) pll_aligned_free(sumtable_);
    if (part_) pll_partition_destroy(part_);
}

int site_slice::scaler(int v) const {
    return static_cast<std::size_t>(v) < tips_ ? PLL_SCALE_BUFFER_NONE : v - static_cast<int>(tips_);
}

void site_slice::set_weights(const unsigned* all_sites) { pll_set_pattern_weights(part_, all_sites + lo_); }

void site_slice::update_matrices(const unsigned* matrices, const double* lengths, std::size_t count) {
    if (count == 0) return;
    // params_ has one entry per rate category; pll_update_prob_matrices uses the same params for every matrix.
    check(pll_update_prob_matrices(part_, params_.data(), matrices, lengths, static_cast<unsigned>(count)),
          "pll_update_prob_matrices");
}

void site_slice::copy_matrices(const site_slice& from, const unsigned* matrices, std::size_t count) {
    const pll_partition* src = from.part_;
    if (src->states != part_->states || src->states_padded != part_->states_padded || src->rate_cats != part_->rate_cats ||
        src->prob_matrices != part_->prob_matrices)
        throw std::logic_error("site_slice::copy_matrices: slices of different shapes");
    // libpll keeps the P matrices contiguous, states x states_padded x rate_cats doubles apart
    const std::size_t doubles = std::size_t{part_->states} * part_->states_padded * part_->rate_cats;
    if (part_->prob_matrices > 1 && part_->pmatrix[1] - part_->pmatrix[0] != static_cast<std::ptrdiff_t>(doubles))
        throw std::logic_error("site_slice::copy_matrices: unexpected P-matrix layout");
    for (std::size_t i = 0; i < count; ++i) {
        if (matrices[i] >= part_->prob_matrices) throw std::logic_error("site_slice::copy_matrices: no such P matrix");
        std::memcpy(part_->pmatrix[matrices[i]], src->pmatrix[matrices[i]], doubles * sizeof(double));
    }
}

void site_slice::update_partials(const pll_operation* ops, std::size_t count) {
    pll_update_partials(part_, ops, static_cast<unsigned>(count));
}

double site_slice::edge_loglik(int inner, int other, unsigned matrix) {
    return pll_compute_edge_loglikelihood(part_, static_cast<unsigned>(inner), scaler(inner), static_cast<unsigned>(other),
                                          scaler(other), matrix, params_.data(), nullptr);
}

double site_slice::edge_loglik_persite(int inner, int other, unsigned matrix, std::vector<double>& persite) {
    persite.assign(hi_ - lo_, 0.0);
    return pll_compute_edge_loglikelihood(part_, static_cast<unsigned>(inner), scaler(inner), static_cast<unsigned>(other),
                                          scaler(other), matrix, params_.data(), persite.data());
}

void site_slice::update_sumtable(int inner, int other) {
    check(pll_update_sumtable(part_, static_cast<unsigned>(inner), static_cast<unsigned>(other), scaler(inner),
                              scaler(other), params_.data(), sumtable_),
          "pll_update_sumtable");
}

std::array<double, 2> site_slice::derivatives(int inner, int other, double t) {
    double d1 = 0, d2 = 0;
    check(pll_compute_likelihood_derivatives(part_, scaler(inner), scaler(other), t, params_.data(), sumtable_, &d1, &d2),
          "pll_compute_likelihood_derivatives");
    // libpll returns the derivatives of the negative log-likelihood
    return {-d1, -d2};
}

model_arrays site_slice::arrays() const {
    model_arrays m;
    const unsigned s = part_->states;
    if (s != 4) throw std::logic_error("site_slice::arrays: DNA (4 states) only");
    std::copy(part_->inv_eigenvecs[0], part_->inv_eigenvecs[0] + 16, m.inv_eigenvecs.begin());
    std::copy(part_->eigenvecs[0], part_->eigenvecs[0] + 16, m.eigenvecs.begin());
    std::copy(part_->eigenvals[0], part_->eigenvals[0] + 4, m.eigenvals.begin());
    std::copy(part_->frequencies[0], part_->frequencies[0] + 4, m.freqs.begin());
    m.rates.assign(part_->rates, part_->rates + part_->rate_cats);
    m.rate_weights.assign(part_->rate_weights, part_->rate_weights + part_->rate_cats);
    return m;
}

}  // namespace mmgp::kernels
