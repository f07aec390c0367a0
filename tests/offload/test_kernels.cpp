// Tests of the libpll kernels, the off-load runtime, the profiler and `mmgp profile`.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <zlib.h>

#include "app_profile.hpp"
#include "cuda/host_reference.hpp"
#include "cuda/slice_offloader.hpp"
#include "kernels.hpp"
#include "runtime.hpp"
#include "scheduler.hpp"

#include <mmgp/advisor.hpp>
#include <mmgp/error.hpp>
#include <mmgp/profile.hpp>

namespace K = mmgp::kernels;
namespace fs = std::filesystem;

namespace {

// JC69 closed form: P(same) = 1/4 + 3/4 e^{-4t/3}, P(different) = 1/4 - 1/4 e^{-4t/3}.
double jc(int x, int y, double t) {
    double e = std::exp(-4.0 * t / 3.0);
    return x == y ? 0.25 + 0.75 * e : 0.25 - 0.25 * e;
}
int code(char c) { return c == 'A' ? 0 : c == 'C' ? 1 : c == 'G' ? 2 : 3; }

K::alignment make(std::vector<std::string> rows) {
    K::alignment a;
    a.source = "test";
    for (std::size_t i = 0; i < rows.size(); ++i) a.names.push_back(std::string("t").append(std::to_string(i)));
    a.rows = std::move(rows);
    return a;
}

// Makes the CLVs of both ends of edge e valid and applies the updates to the slice; returns (inner, other).
std::pair<int, int> focus(K::site_slice& s, const K::tree& t, K::orientation& o, int e) {
    auto [a, b] = t.ends[static_cast<std::size_t>(e)];
    if (t.is_tip(a)) std::swap(a, b);
    K::newview_batch batch;
    o.orient(t, a, b, batch);
    o.orient(t, b, a, batch);
    s.update_matrices(batch.matrices.data(), batch.lengths.data(), batch.matrices.size());
    s.update_partials(batch.ops.data(), batch.ops.size());
    return {a, b};
}

double loglik_at(K::site_slice& s, const K::tree& t, K::orientation& o, int e) {
    auto [a, b] = focus(s, t, o, e);
    unsigned mi = static_cast<unsigned>(e);
    double len = t.length[static_cast<std::size_t>(e)];
    s.update_matrices(&mi, &len, 1);
    return s.edge_loglik(a, b, mi);
}

// Independent Felsenstein pruning under JC69 (no libpll): conditional likelihoods of the subtree of v seen from w.
std::array<double, 4> prune(const K::tree& t, const K::alignment& a, std::size_t site, int v, int w) {
    std::array<double, 4> L{};
    if (t.is_tip(v)) {
        L[static_cast<std::size_t>(code(a.rows[static_cast<std::size_t>(v)][site]))] = 1.0;
        return L;
    }
    L = {1, 1, 1, 1};
    for (std::size_t k = 0; k < 3; ++k) {
        int c = t.nbr[static_cast<std::size_t>(v)][k];
        if (c == w) continue;
        double len = t.length[static_cast<std::size_t>(t.nedge[static_cast<std::size_t>(v)][k])];
        auto Lc = prune(t, a, site, c, v);
        for (int x = 0; x < 4; ++x) {
            double s = 0;
            for (int y = 0; y < 4; ++y) s += jc(x, y, len) * Lc[static_cast<std::size_t>(y)];
            L[static_cast<std::size_t>(x)] *= s;
        }
    }
    return L;
}

double independent_jc_loglik(const K::tree& t, const K::alignment& a) {
    int tip = 0, inner = t.nbr[0][0];
    double len = t.length[static_cast<std::size_t>(t.nedge[0][0])];
    double total = 0;
    for (std::size_t s = 0; s < a.sites(); ++s) {
        auto Li = prune(t, a, s, inner, tip);
        auto Lt = prune(t, a, s, tip, inner);
        double site = 0;
        for (int x = 0; x < 4; ++x)
            for (int y = 0; y < 4; ++y)
                site += 0.25 * Li[static_cast<std::size_t>(x)] * jc(x, y, len) * Lt[static_cast<std::size_t>(y)];
        total += std::log(site);
    }
    return total;
}

struct tmpdir {
    fs::path path;
    tmpdir() {
        char tmpl[] = "/tmp/mmgp-kernels-XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~tmpdir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

struct outcome {
    int status;
    std::string out, err;
};

std::string slurp(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

outcome sh(const std::string& cmd, const fs::path& dir) {
    const fs::path o = dir / "stdout.txt", e = dir / "stderr.txt";
    int rc = std::system((cmd + " >" + o.string() + " 2>" + e.string()).c_str());
    outcome r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(o), slurp(e)};
    fs::remove(o);
    fs::remove(e);
    return r;
}

std::string mmgp_bin() {
    const char* b = std::getenv("MMGP_BIN");
    return b ? b : "build/cli/mmgp";
}
std::string offload_bin() {
    const char* b = std::getenv("MMGP_OFFLOAD_RUN");
    return b ? b : "build/offload/mmgp-offload-run";
}

int count_lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

// mmgp-offload-run refuses each of `args` as bad input: exit 2, one line on stderr, nothing on stdout.
void check_offload_run_refuses(std::initializer_list<const char*> args, const fs::path& dir) {
    for (const std::string a : args) {
        outcome q = sh(offload_bin() + a, dir);
        INFO(a << " -> " << q.err);
        CHECK(q.status == 2);
        CHECK(count_lines(q.err) == 1);
        CHECK(q.out.empty());
    }
}

// The JSON report of mmgp-offload-run with `args`, which must succeed.
nlohmann::json offload_run_json(const std::string& args, const fs::path& dir) {
    outcome ok = sh(offload_bin() + args, dir);
    INFO(ok.err);
    REQUIRE(ok.status == 0);
    return nlohmann::json::parse(ok.out);
}

// A small simulated problem for the runtime: 6 taxa, `sites` sites, `units` bootstrap units, a 60 s watchdog.
K::config simulated_problem(int sites, int units) {
    K::config c;
    c.simulate_taxa = 6;
    c.simulate_sites = sites;
    c.timeout_s = 60;
    c.units = units;
    return c;
}

}  // namespace

TEST_CASE("3 taxa under JC69: libpll's edge log-likelihood equals the closed-form hand computation") {
    // Star tree: tips 0, 1, 2 around inner node 3, edges 0, 1, 2.
    K::alignment a = make({"AACGTA", "ACCGTT", "AGCTTA"});
    K::tree t = K::random_tree(3, 1);
    REQUIRE(t.nodes() == 4);
    const double len[3] = {0.1, 0.25, 0.4};
    for (int e = 0; e < 3; ++e) {
        auto [x, y] = t.ends[static_cast<std::size_t>(e)];
        int tip = t.is_tip(x) ? x : y;
        t.length[static_cast<std::size_t>(e)] = len[tip];
    }
    // By hand: L(site) = sum_x 1/4 P(x->s0, t0) P(x->s1, t1) P(x->s2, t2).
    // e.g. the first site (A, A, A) with e_i = exp(-4 t_i / 3):
    //   1/4 (1/4 + 3/4 e0)(1/4 + 3/4 e1)(1/4 + 3/4 e2) + 3/4 (1/4 - 1/4 e0)(1/4 - 1/4 e1)(1/4 - 1/4 e2)
    double e0 = std::exp(-4 * 0.1 / 3), e1 = std::exp(-4 * 0.25 / 3), e2 = std::exp(-4 * 0.4 / 3);
    double first = 0.25 * (0.25 + 0.75 * e0) * (0.25 + 0.75 * e1) * (0.25 + 0.75 * e2) +
                   0.75 * (0.25 - 0.25 * e0) * (0.25 - 0.25 * e1) * (0.25 - 0.25 * e2);
    double expected = 0;
    std::vector<double> persite_expected;
    for (std::size_t s = 0; s < a.sites(); ++s) {
        double site = 0;
        for (int x = 0; x < 4; ++x) {
            double p = 0.25;
            for (int i = 0; i < 3; ++i) p *= jc(x, code(a.rows[static_cast<std::size_t>(i)][s]), len[i]);
            site += p;
        }
        persite_expected.push_back(std::log(site));
        expected += std::log(site);
    }
    CHECK(persite_expected[0] == doctest::Approx(std::log(first)).epsilon(1e-14));

    K::site_slice s(a, K::jc69(), 0, a.sites());
    K::orientation o(t);
    for (int e = 0; e < 3; ++e) CHECK(loglik_at(s, t, o, e) == doctest::Approx(expected).epsilon(1e-10));
    std::vector<double> persite;
    auto [inner, other] = focus(s, t, o, 0);
    double sum = s.edge_loglik_persite(inner, other, 0, persite);
    CHECK(sum == doctest::Approx(expected).epsilon(1e-10));
    REQUIRE(persite.size() == persite_expected.size());
    for (std::size_t i = 0; i < persite.size(); ++i) CHECK(persite[i] == doctest::Approx(persite_expected[i]).epsilon(1e-10));
}

TEST_CASE("8 taxa under JC69: oriented CLVs give the independent pruning value at every edge, after branch changes") {
    K::alignment full = K::simulate_alignment(8, 300, 5);
    K::tree t = K::random_tree(8, 11);
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0.02, 0.5);
    for (double& l : t.length) l = u(rng);
    K::site_slice s(full, K::jc69(), 0, full.sites());
    K::orientation o(t);
    const double ref = independent_jc_loglik(t, full);
    CHECK(ref < 0);
    for (std::size_t e = 0; e < t.edges(); ++e) CHECK(loglik_at(s, t, o, static_cast<int>(e)) == doctest::Approx(ref).epsilon(1e-9));
    // change branch lengths at the focus edge while walking; the bookkeeping must keep every CLV valid
    for (std::size_t e = t.edges(); e-- > 0;) {
        focus(s, t, o, static_cast<int>(e));
        t.length[e] = u(rng);
        double got = loglik_at(s, t, o, static_cast<int>(e));
        CHECK(got == doctest::Approx(independent_jc_loglik(t, full)).epsilon(1e-9));
    }
    // weights (a bootstrap replicate): the weighted sum of per-site values; site ranges add up
    std::vector<unsigned> w(full.sites());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<unsigned>(i % 3);
    K::site_slice lo(full, K::jc69(), 0, 120), hi(full, K::jc69(), 120, full.sites());
    s.set_weights(w.data());
    lo.set_weights(w.data());
    hi.set_weights(w.data());
    K::orientation o1(t), o2(t), o3(t);
    std::vector<double> persite;
    auto [in, ot] = focus(s, t, o1, 2);
    unsigned mi = 2;
    double l2 = t.length[2];
    s.update_matrices(&mi, &l2, 1);
    s.set_weights(std::vector<unsigned>(full.sites(), 1).data());
    s.edge_loglik_persite(in, ot, 2, persite);
    double weighted = 0;
    for (std::size_t i = 0; i < persite.size(); ++i) weighted += w[i] * persite[i];
    s.set_weights(w.data());
    CHECK(s.edge_loglik(in, ot, 2) == doctest::Approx(weighted).epsilon(1e-10));
    CHECK(loglik_at(lo, t, o2, 2) + loglik_at(hi, t, o3, 2) == doctest::Approx(weighted).epsilon(1e-10));
}

TEST_CASE("makenewz: libpll's derivatives match finite differences of evaluate (GTR+G4, bootstrap weights)") {
    K::alignment a = K::simulate_alignment(10, 501, 9);
    K::model m = K::default_model(a);
    K::tree t = K::random_tree(10, 4);
    K::site_slice s(a, m, 0, a.sites());
    std::vector<unsigned> w(a.sites());
    std::mt19937_64 rng(2);
    std::uniform_int_distribution<std::size_t> pick(0, a.sites() - 1);
    for (std::size_t i = 0; i < a.sites(); ++i) ++w[pick(rng)];
    s.set_weights(w.data());
    K::orientation o(t);
    for (int e : {0, 7, 12}) {
        auto [in, ot] = focus(s, t, o, e);
        s.update_sumtable(in, ot);
        unsigned mi = static_cast<unsigned>(e);
        auto L = [&](double x) {
            s.update_matrices(&mi, &x, 1);
            return s.edge_loglik(in, ot, mi);
        };
        const double x = 0.13, h = 1e-4;
        auto d = s.derivatives(in, ot, x);
        double fd1 = (L(x + h) - L(x - h)) / (2 * h);
        double fd2 = (L(x + h) - 2 * L(x) + L(x - h)) / (h * h);
        CHECK(d[0] == doctest::Approx(fd1).epsilon(1e-4));
        CHECK(d[1] == doctest::Approx(fd2).epsilon(1e-3));
    }
}

// |x - y| within `rel` of |y|.
bool close(double x, double y, double rel) { return std::fabs(x - y) <= rel * std::fabs(y); }

TEST_CASE("the GPU kernels' per-site arithmetic, on the host, equals libpll within 1e-9 (GTR+G4, bootstrap weights)") {
    // The same walk on libpll (site_slice) and on the code the CUDA kernels run per site (host_slice): every edge
    // focused in turn (newview through the orientation), its log-likelihood, the sumtable and the derivatives at
    // three branch lengths; the P matrices recomputed for each (the off-load every APU repeats). IUPAC codes and gaps
    // in the data, a slice that starts inside the alignment, weights of a bootstrap resample.
    K::alignment a = K::simulate_alignment(12, 700, 21);
    a.rows[3][5] = 'N', a.rows[4][6] = '-', a.rows[5][7] = 'R', a.rows[6][8] = 'Y';
    const K::model m = K::default_model(a);
    const K::tree t = K::random_tree(12, 5);
    const std::size_t lo = 37, hi = 650;
    K::site_slice ref(a, m, lo, hi);
    mmgp::offload::host_slice gpu(a, ref.arrays(), lo, hi, t.edges());
    std::vector<unsigned> w(a.sites());
    std::mt19937_64 rng(3);
    std::uniform_int_distribution<std::size_t> pick(0, a.sites() - 1);
    for (std::size_t i = 0; i < a.sites(); ++i) ++w[pick(rng)];
    ref.set_weights(w.data());
    gpu.set_weights(w.data());
    int compared = 0;
    mmgp::offload::compare_walk(t, ref, gpu, [&compared](double got, double want, const char* what, std::size_t e) {
        CHECK_MESSAGE(close(got, want, 1e-9), "edge " << e << ", " << what << ": " << got << " against libpll's " << want);
        ++compared;
    });
    CHECK(compared == 7 * static_cast<int>(t.edges()));
}

TEST_CASE("the bootstrap program's units through the GPU kernels' offloader (its host twin) equal libpll's") {
    // The runtime's requests (weights, newview, evaluate, sumtable, derivatives with Newton steps) translated to
    // the GPU kernels' calls, run here on their host arithmetic (host_slice; the device runs the same code,
    // mmgp-gpu-likelihood): each unit's log-likelihood after its smoothing round equals libpll's, for the whole
    // alignment and for a process's share of it.
    K::alignment a = K::simulate_alignment(10, 500, 9);
    a.rows[2][3] = 'N', a.rows[4][7] = '-';
    const K::model m = K::default_model(a);
    const K::tree t = K::random_tree(10, 4);
    for (const auto& [lo, hi] : {std::pair<std::size_t, std::size_t>{0, 500}, {123, 401}}) {
        mmgp::offload::libpll_offloader ref(a, m, lo, hi);
        const K::site_slice arrays_of(a, m, lo, hi);
        mmgp::offload::host_slice slice(a, arrays_of.arrays(), lo, hi, t.edges());
        mmgp::offload::slice_offloader<mmgp::offload::host_slice> gpu(slice, lo);
        K::detail::bootstrap_search on_libpll(t, a.sites(), 1, 4, 7), on_gpu(t, a.sites(), 1, 4, 7);
        for (int unit = 0; unit < 3; ++unit) {
            const double want = on_libpll.run_unit(unit, ref), got = on_gpu.run_unit(unit, gpu);
            CHECK_MESSAGE(close(got, want, 1e-9), "sites [" << lo << ", " << hi << "), unit " << unit << ": " << got
                                                             << " against libpll's " << want);
            CHECK(std::isfinite(got));
            CHECK(got < 0);
        }
    }
}

TEST_CASE("the GPU kernels' per-site arithmetic: a site below 2^-256 is scaled and counted, as libpll does") {
    // Children with every entry 1e-40 through identity matrices: each product 1e-80 < 2^-256 (8.6e-78), so the site
    // is scaled by 2^256 and counted once; one entry of 1 among them leaves it unscaled.
    namespace S = mmgp::offload::site;
    std::array<double, 16> id{};
    for (int i = 0; i < 4; ++i) id[static_cast<std::size_t>(i * 5)] = 1;
    std::array<double, 4> tiny{1e-40, 1e-40, 1e-40, 1e-40}, parent{};
    CHECK(S::newview_site(1, id.data(), tiny.data(), id.data(), tiny.data(), parent.data()) == 1);
    CHECK(parent[2] == doctest::Approx(1e-80 * S::scale_factor).epsilon(1e-12));
    std::array<double, 4> one{1e-40, 1, 1e-40, 1e-40}, ones{1, 1, 1, 1};
    CHECK(S::newview_site(1, id.data(), one.data(), id.data(), ones.data(), parent.data()) == 0);
    CHECK(parent[1] == 1.0);
    // evaluate adds log(2^-256) per scaling counted: a site of likelihood 1 scaled twice is -2 x 256 log 2.
    std::array<double, 16> a = id, b = id;
    std::array<double, 4> lambda{0, -1, -1, -1}, freqs{0.25, 0.25, 0.25, 0.25};
    const double rate = 1, weight = 1;
    const S::model_view m{a.data(), b.data(), lambda.data(), freqs.data(), &rate, &weight, 1};
    CHECK(S::edge_site(m, id.data(), ones.data(), ones.data(), 2) == doctest::Approx(-2 * 256 * std::log(2.0)));
}

TEST_CASE("the GPU kernels' per-site arithmetic: a site is scaled only when every rate category's entries are small") {
    // Two rate categories, identity P matrices. newview_rate answers per category (the GPU's threads of a site
    // each hold one and agree on the site); newview_site scales when both are small.
    namespace S = mmgp::offload::site;
    std::array<double, 32> id{};
    for (int r = 0; r < 2; ++r)
        for (int i = 0; i < 4; ++i) id[static_cast<std::size_t>(r * 16 + i * 5)] = 1;
    const std::array<double, 8> small{1e-40, 1e-40, 1e-40, 1e-40, 1e-40, 1e-40, 1e-40, 1e-40};
    const std::array<double, 8> mixed{1e-40, 1e-40, 1e-40, 1e-40, 1, 1, 1, 1};  // rate 0 small, rate 1 not
    std::array<double, 4> out{};
    CHECK(S::newview_rate(0, id.data(), mixed.data(), id.data(), mixed.data(), out.data()));
    CHECK(out[0] == doctest::Approx(1e-80).epsilon(1e-12));
    CHECK_FALSE(S::newview_rate(1, id.data(), mixed.data(), id.data(), mixed.data(), out.data()));
    CHECK(out[3] == 1.0);
    std::array<double, 8> parent{};
    CHECK(S::newview_site(2, id.data(), mixed.data(), id.data(), mixed.data(), parent.data()) == 0);
    CHECK(parent[0] == doctest::Approx(1e-80).epsilon(1e-12));  // unscaled: one category is not small
    CHECK(S::newview_site(2, id.data(), small.data(), id.data(), small.data(), parent.data()) == 1);
    CHECK(parent[7] == doctest::Approx(1e-80 * S::scale_factor).epsilon(1e-12));
}

TEST_CASE("alignments: PHYLIP and FASTA, gzip, and bad files") {
    tmpdir d;
    {
        std::ofstream(d.path / "a.phy") << "3 5\nx ACGTA\ny AC\nGTT\nz  acgtn\n";
        std::ofstream(d.path / "a.fa") << ">x\nACG\nTA\n>y\nACGTT\n>z\nACGTN\n";
        std::ofstream(d.path / "bad.phy") << "3 5\nx ACGTA\ny ACGJT\nz ACGTA\n";
        std::ofstream(d.path / "short.phy") << "3 5\nx ACGTA\ny ACGTA\n";
        std::ofstream(d.path / "empty.phy") << "";
    }
    K::alignment p = K::read_alignment((d.path / "a.phy").string());
    K::alignment f = K::read_alignment((d.path / "a.fa").string());
    CHECK(p.taxa() == 3);
    CHECK(p.sites() == 5);
    CHECK(p.rows == f.rows);
    CHECK(p.rows[2] == "ACGTN");
    CHECK_THROWS_AS(K::read_alignment((d.path / "bad.phy").string()), mmgp::input_error);
    CHECK_THROWS_AS(K::read_alignment((d.path / "short.phy").string()), mmgp::input_error);
    CHECK_THROWS_AS(K::read_alignment((d.path / "empty.phy").string()), mmgp::input_error);
    CHECK_THROWS_AS(K::read_alignment((d.path / "missing.phy").string()), mmgp::input_error);
    try {
        K::read_alignment((d.path / "bad.phy").string());
    } catch (const mmgp::input_error& e) {
        CHECK(std::string(e.what()).find("line 3: expected a DNA character") != std::string::npos);
    }
    // gzip: read whole; cut short, refused (not read as the taxa before the cut).
    std::string fasta;
    std::mt19937 rng(1);
    for (int t = 0; t < 20; ++t) {
        fasta += ">t" + std::to_string(t) + "\n";
        for (int s = 0; s < 300; ++s) fasta += "ACGT"[rng() % 4];
        fasta += "\n";
    }
    const std::string whole = (d.path / "whole.fa.gz").string(), cut = (d.path / "cut.fa.gz").string();
    gzFile gz = gzopen(whole.c_str(), "wb");
    REQUIRE(gz);
    REQUIRE(gzwrite(gz, fasta.data(), static_cast<unsigned>(fasta.size())) == static_cast<int>(fasta.size()));
    REQUIRE(gzclose(gz) == Z_OK);
    CHECK(K::read_alignment(whole).taxa() == 20);
    std::ifstream in(whole, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const std::size_t keep : {bytes.size() / 2, bytes.size() - 1}) {
        CAPTURE(keep);
        std::ofstream(cut, std::ios::binary | std::ios::trunc) << bytes.substr(0, keep);
        CHECK_THROWS_WITH_AS(K::read_alignment(cut), doctest::Contains("cut.fa.gz: (file): expected"), mmgp::input_error);
    }
    const std::string examl = "/usr/share/doc/examl/testData/49.gz";
    if (fs::exists(examl)) {  // Debian's examl ships a real alignment, gzip-compressed
        K::alignment r = K::read_alignment(examl);
        CHECK(r.taxa() == 49);
        CHECK(r.sites() == 1200);
    }
}

TEST_CASE("synthetic program: the profiler recovers the known host, split and serial regions") {
    // A fake program with known regions: per off-load the host busy-waits 40 us, every APU 30 us that cannot be
    // split and 200 us / p of splittable work; 150 off-loads per unit, 3 units.
    K::profile_request rq;
    rq.base.synthetic = true;
    rq.base.units = 3;
    rq.base.synth = {150, 40e-6, 200e-6, 30e-6};
    rq.repetitions = 3;
    rq.name = "synthetic";
    K::profile_report rep = K::measure_profile(rq);
    const double n = 150, U = 3;
    CHECK(rep.N.median == doctest::Approx(n));
    // The busy-waits as the fake kernel timed them (they overshoot when the thread is preempted on a loaded
    // machine): the profiler must attribute them to the right regions, with little bookkeeping on top.
    std::vector<double> host, split, serial;
    REQUIRE(rep.runs.size() == 6);  // p = 1 and p = 2 interleaved
    for (std::size_t r = 0; r < rep.runs.size(); r += 2) {
        CHECK(rep.runs[r].cfg.p == 1);
        host.push_back(rep.runs[r].synth_host_s / U);
        split.push_back(rep.runs[r].synth_split_s / U);
        serial.push_back(rep.runs[r].synth_serial_s / U);
    }
    const double truth_hpu = K::summarize(host).median, truth_apu = K::summarize(split).median,
                 truth_capu = K::summarize(serial).median;
    CHECK(rep.T_hpu.median == doctest::Approx(truth_hpu).epsilon(0.05));
    CHECK(rep.T_hpu.median >= truth_hpu);
    CHECK(rep.T_apu.median == doctest::Approx(truth_apu).epsilon(0.05));
    CHECK(rep.C_apu.median == doctest::Approx(truth_capu).epsilon(0.10));
    CHECK(rep.C_apu.median >= truth_capu);
    // ... and the known durations themselves (wider: preemption on a shared machine only lengthens them)
    CHECK(rep.T_hpu.median == doctest::Approx(n * 40e-6).epsilon(0.25));
    CHECK(rep.T_apu.median == doctest::Approx(n * 200e-6).epsilon(0.25));
    CHECK(rep.C_apu.median == doctest::Approx(n * 30e-6).epsilon(0.35));
    CHECK(rep.T_hpu.median >= n * 40e-6);
    CHECK(rep.T_apu.median >= n * 200e-6);
    CHECK(std::isfinite(rep.g.median));
    auto j = nlohmann::json::parse(rep.json);
    // g comes from the undisturbed pairs only: the fastest p = 2 run always counts, no slower-than-the-ratio one does.
    std::vector<double> w2, g_used;
    for (std::size_t r = 1; r < rep.runs.size(); r += 2) w2.push_back(rep.runs[r].wall_s);
    const auto fastest = static_cast<int>(std::min_element(w2.begin(), w2.end()) - w2.begin());
    const auto& used = rep.g_pairs_used;
    CHECK(std::find(used.begin(), used.end(), fastest) != used.end());
    for (int i : used) {
        CHECK(w2[static_cast<std::size_t>(i)] <= K::undisturbed_p2_ratio * w2[static_cast<std::size_t>(fastest)]);
        g_used.push_back(j["measurements"]["g_s"][static_cast<std::size_t>(i)].get<double>());
    }
    for (std::size_t i = 0; i < w2.size(); ++i)
        if (std::find(used.begin(), used.end(), static_cast<int>(i)) == used.end())
            CHECK(w2[i] > K::undisturbed_p2_ratio * w2[static_cast<std::size_t>(fastest)]);
    CHECK(rep.g.median == K::summarize(g_used).median);
    CHECK(j["measurements"]["g_pairs_used"].size() == used.size());
    // The p = 2 runs are pinned (HPU thread and master on one core, the worker on another); the p = 1 runs not.
    for (std::size_t r = 0; r < rep.runs.size(); ++r) CHECK(rep.runs[r].pinned == (r % 2 == 1));
    CHECK(j["measurements"]["g_p2_pinned"] == true);
    CHECK(j["schema"] == "mmgp/1");
    CHECK(j["kind"] == "application");
    CHECK(j["decomposition"] == "task");
    CHECK(j["units"] == 3);
    CHECK(j["T_apu"]["value"].get<double>() == doctest::Approx(rep.T_apu.median));
    CHECK(j["T_apu"]["repetitions"] == 3);
    CHECK(j["g"]["value"].get<double>() >= 0);
}

TEST_CASE("pin_team pins every thread of a run and leaves the results unchanged") {
    K::config c = simulated_problem(120, 2);
    c.m = 2;
    c.p = 2;
    const K::result free = K::run(c);
    c.pin_team = true;
    const K::result pinned = K::run(c);
    CHECK(!free.pinned);
    CHECK(pinned.pinned);
    REQUIRE(free.unit_loglik.size() == pinned.unit_loglik.size());
    for (std::size_t u = 0; u < free.unit_loglik.size(); ++u) CHECK(pinned.unit_loglik[u] == free.unit_loglik[u]);
    CHECK(nlohmann::json::parse(K::to_json(pinned))["pinned"] == true);
    CHECK(!nlohmann::json::parse(K::to_json(free)).contains("pinned"));
}

TEST_CASE("the runtime runs every (m, p) with m*p <= 8 under both policies; results do not depend on the mapping") {
    const K::config base = simulated_problem(240, 4);
    K::result ref = K::run(base);
    REQUIRE(ref.unit_loglik.size() == 4);
    for (double l : ref.unit_loglik) CHECK(l < 0);
    for (auto pol : {K::host_policy::edtlp, K::host_policy::os})
        for (int m = 1; m <= 8; ++m)
            for (int p = 1; m * p <= 8; ++p) {
                K::config c = base;
                c.m = m;
                c.p = p;
                c.policy = pol;
                K::result r = K::run(c);
                INFO("m=" << m << " p=" << p << " policy " << K::to_string(pol));
                CHECK(r.wall_s > 0);
                CHECK(r.t.offloads == ref.t.offloads);
                REQUIRE(r.unit_loglik.size() == 4);
                for (std::size_t u = 0; u < 4; ++u) CHECK(r.unit_loglik[u] == doctest::Approx(ref.unit_loglik[u]).epsilon(1e-9));
            }
}

TEST_CASE("the watchdog ends a run that takes too long with an error, not a hang") {
    K::config c;
    c.synthetic = true;
    c.synth = {100000, 1e-3, 1e-3, 0};
    c.m = 2;
    c.p = 2;
    c.policy = K::host_policy::os;
    c.timeout_s = 0.3;
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(K::run(c), doctest::Contains("watchdog"), std::runtime_error);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 10.0);
}

TEST_CASE("the watchdog ends a run inside one busy-wait longer than the watchdog (host, split), both modes") {
    for (const K::synthetic_program& synth : {K::synthetic_program{1, 20.0, 0, 0}, K::synthetic_program{1, 0, 20.0, 0}})
        for (int apus : {0, 2}) {
            K::config c;
            c.synthetic = true;
            c.synth = synth;
            c.m = 1;
            c.p = 2;
            c.apus = apus;
            c.units = 1;
            c.timeout_s = 0.3;
            CAPTURE(synth.host_s);
            CAPTURE(apus);
            const auto t0 = std::chrono::steady_clock::now();
            CHECK_THROWS_WITH_AS(K::run(c), doctest::Contains("watchdog"), std::runtime_error);
            CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 10.0);
        }
}

TEST_CASE("the runtime rejects bad configurations") {
    K::config c;
    c.m = 0;
    CHECK_THROWS_AS(K::run(c), mmgp::usage_error);
    c.m = 1;
    c.simulate_sites = 3;
    c.simulate_taxa = 4;
    c.p = 4;
    CHECK_THROWS_AS(K::run(c), mmgp::usage_error);
    c.p = 1;
    c.alignment = "/nonexistent/alignment.phy";
    CHECK_THROWS_AS(K::run(c), mmgp::input_error);  // the file's fault, named with its location
}

TEST_CASE("mmgp profile writes an application profile that mmgp predict reads") {
    tmpdir d;
    const fs::path app = d.path / "app.json", scen = d.path / "scenario.json";
    outcome r = sh(mmgp_bin() + " profile --simulate 10:400 --units 3 --repetitions 2 -o " + app.string(), d.path);
    INFO(r.err);
    REQUIRE(r.status == 0);
    // stderr: one progress line per run (2 repetitions x 2 runs), nothing else; --quiet: nothing at all.
    CHECK(count_lines(r.err) == 4);
    CHECK(r.err.find("mmgp profile: [2/2] run with 2 APUs for g (m=1, p=2) done\n") != std::string::npos);
    outcome q = sh(mmgp_bin() + " profile --simulate 10:400 --units 3 --repetitions 2 --quiet -o " + app.string(), d.path);
    CHECK(q.status == 0);
    CHECK(q.err.empty());
    REQUIRE(fs::exists(app));
    auto j = nlohmann::json::parse(slurp(app));
    CHECK(j["units"] == 3);
    CHECK(j["N"]["value"].get<double>() > 10);
    CHECK(j["T_apu"]["value"].get<double>() > 0);
    CHECK(j["T_hpu"]["value"].get<double>() > 0);
    CHECK(j["T_apu"]["repetitions"] == 2);
    // How the model reads this runtime: g is a slope per extra APU; waits spin 4000 iterations, then block.
    CHECK(j["g_charge"] == "per_extra_apu");
    CHECK(j["spin_limit"] == mmgp::kernels::spin_then_block_limit);
    // The program's own idle-core off-load overhead is the measured one (round trip minus APU time).
    CHECK(j["T_offload_idle"]["value"].get<double>() > 0);
    CHECK(j["T_offload_idle"]["value"].get<double>() ==
          j["measurements"]["offload_overhead_s_per_call"]["median"].get<double>());
    for (auto& e : fs::directory_iterator(d.path)) CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
    std::ofstream(scen) << R"({"schema":"mmgp/1","platform":{"name":"host","hpu_contexts":2,"apus":2,"O_offload":1e-6,)"
                           R"("T_csw":3e-6,"alpha":1.1},"application":"app.json","search":{"m":[1,8],"p":[1,8]}})";
    outcome pr = sh(mmgp_bin() + " predict " + scen.string() + " --json", d.path);
    INFO(pr.err);
    CHECK(pr.status == 0);
    auto pj = nlohmann::json::parse(pr.out);
    CHECK(pj["feasible"].get<int>() >= 3);
}

TEST_CASE("mmgp profile and mmgp-offload-run: bad input is one line on stderr, exit 2, nothing written") {
    tmpdir d;
    const fs::path out = d.path / "app.json";
    std::ofstream(d.path / "bad.phy") << "4 10\na ACGTACGTAC\nb ACGTACGTAC\nc ACGT\n";
    std::ofstream(d.path / "one.phy") << "3 1\na A\nb C\nc G\n";
    const std::string o = " -o " + out.string();
    for (const std::string& args : {" --alignment " + (d.path / "bad.phy").string(), std::string(" --alignment /nonexistent.phy"),
                                   std::string(" --simulate 2:100"), std::string(" --simulate 10"),
                                   std::string(" --simulate 10:400 --units 0"), std::string(" --simulate 10:400 --bogus"),
                                   std::string(" --simulate 10:400 --sites 100000"),
                                   // once taken: a sign and spaces (and written so into the provenance), hexadecimal
                                   std::string(" --simulate ' +8: +200'"), std::string(" --simulate 8:0x20"),
                                   // likelihood vectors far past any machine's memory (once std::bad_alloc, exit 1)
                                   std::string(" --simulate 10000:10000000 --units 1 --repetitions 1"),
                                   // one site: g's runs need 2 (once refused after a progress line, naming --p)
                                   " --alignment " + (d.path / "one.phy").string()}) {
        outcome r = sh(mmgp_bin() + " profile" + args + o, d.path);
        INFO(args << " -> " << r.err);
        CHECK(r.status == 2);
        CHECK(count_lines(r.err) == 1);
        CHECK(r.err.rfind("mmgp: ", 0) == 0);
        CHECK(r.out.empty());
        CHECK_FALSE(fs::exists(out));
    }
    outcome r = sh(mmgp_bin() + " profile --simulate 10:400 --units 1 --repetitions 1 -o " + (d.path / "no/such/dir.json").string(), d.path);
    CHECK(r.status == 2);
    CHECK(count_lines(r.err) == 1);
    check_offload_run_refuses({" --policy fifo", " --simulate x:1", " --m 0", " --synthetic 1:2", " --accelerator gpu",
                               " --accelerator cuda --synthetic 1:1:1:1", " --accelerator cuda --apus 2",
                               " --accelerator cuda --m 0", " --accelerator cuda --from-launcher",
                               " --from-launcher --m 2",
                               // once taken: a seed wrapped to 2^64 - 1, a watchdog that never fires, 40,000 threads
                               " --seed -1", " --timeout 1e400", " --m 20000",
                               // once taken as numbers, so a busy-wait that never ends
                               " --synthetic 1:inf:0:0", " --synthetic 1:0:nan:0", " --synthetic 1:0:0:1e400",
                               // once taken: a count wrapped to 1, hexadecimal times, counts and a watchdog; a
                               // sign, a space; a seed of 26 digits clamped to 2^64 - 1
                               " --synthetic 4294967297:1:1:1 --units 1", " --synthetic 1:0x10:0x1p3:1", " --synthetic 1:2:3:4:5",
                               " --simulate 8:100 --units 0x3", " --simulate 8:100 --timeout 0x10", " --simulate 8:100 --m +1",
                               " --simulate 8:100 --units ' 3'", " --simulate +8:100",
                               " --seed 99999999999999999999999999 --simulate 8:100",
                               // the synthetic program reads no data: data options were taken and ignored
                               " --synthetic 10:1:1:1 --alignment /nonexistent", " --synthetic 10:1:1:1 --rounds 7",
                               // likelihood vectors far past any machine's memory (once std::bad_alloc, exit 1)
                               " --simulate 100000:100000000 --units 1",
                               // bad data before the device: once "no usable GPU" (77) on a machine without one
                               " --accelerator cuda --alignment /nonexistent.phy",
                               // a platform that cannot price the copies, named (once ": /platform/dma", no file)
                               " --accelerator cuda --profile --platform qs20",
                               // options of --profile without it (once taken, doing nothing)
                               " --repetitions 2", " --name x", " --quiet"},
                              d.path);
    auto j = offload_run_json(" --m 2 --p 2 --policy os --synthetic 20:10:40:5 --units 2", d.path);
    CHECK(j["offloads"] == 40);
    CHECK(j["wall_s"].get<double>() > 0);
    // mmgp profile --accelerator cuda: the program's one line alone (once with a note before it), on any machine.
    for (const std::string args : {" --platform qs20", " --alignment /nonexistent.phy"}) {
        outcome q = sh(mmgp_bin() + " profile --accelerator cuda" + args + " -o " + (d.path / "gpu.json").string(), d.path);
        INFO(args << " -> " << q.err);
        CHECK(q.status == 2);
        CHECK(count_lines(q.err) == 1);
        CHECK_FALSE(fs::exists(d.path / "gpu.json"));
    }
    // The launcher's variables are decimal digits too (strtol took " 2" and "+2").
    for (const char* np : {"' 2'", "+2"}) {
        outcome q = sh(std::string("MMGP_RANK=0 MMGP_UNITS_TOTAL=4 MMGP_NP=") + np + " " + offload_bin() +
                           " --accelerator cuda --from-launcher --simulate 8:100",
                       d.path);
        INFO(np << " -> " << q.err);
        CHECK(q.status == 2);
        CHECK(q.err.find("MMGP_NP") != std::string::npos);
    }
    outcome named = sh(offload_bin() + " --accelerator cuda --profile --platform qs20", d.path);
    CHECK(named.err.find(": qs20: /dma: expected a transfer cost") != std::string::npos);
    // A result that cannot be written is an error, not a run reported as done (once exit 0, the JSON lost).
    for (const char* to : {" >/dev/full", " >&-"}) {
        INFO(to);
        CHECK(std::system((offload_bin() + " --synthetic 4:1:1:1 --units 1" + to + " 2>/dev/null").c_str()) != 0);
    }
}

TEST_CASE("mmgp profile: runs with 2 APUs that cannot have a core each are not reported pinned") {
    if (std::system("command -v taskset >/dev/null 2>&1") != 0) {
        MESSAGE("skipped: no taskset");
        return;
    }
    tmpdir d;
    const fs::path out = d.path / "app.json";
    // One CPU allowed (the first this process may use): pinning put both threads on it (once reported pinned, g
    // about 85x the gap).
    const std::vector<int> cpus = mmgp::available_cpus();
    REQUIRE_FALSE(cpus.empty());
    outcome r = sh("taskset -c " + std::to_string(cpus.front()) + " " + mmgp_bin() + " profile --simulate 8:400 --units 2 --repetitions 2 -q -o " + out.string(),
                   d.path);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(nlohmann::json::parse(slurp(out))["measurements"]["g_p2_pinned"] == "2 p=2 run(s) could not be pinned");
    CHECK(r.err.find("mmgp: warning: 2 run(s) with 2 APUs could not be pinned to a core each") != std::string::npos);
}

TEST_CASE("mmgp profile --accelerator cuda: mmgp-offload-run measures, mmgp writes what the engine reads, or nothing") {
    // A stand-in for mmgp-offload-run (no GPU here): it records its arguments and answers as told.
    tmpdir d;
    const fs::path tool = d.path / "offload-run", args = d.path / "args.txt", out = d.path / "app.json";
    const std::string doc = R"({"schema": "mmgp/1", "kind": "application", "name": "x", "decomposition": "task", )"
                            R"("units": 3, "N": 10, "T_hpu": 0.01, "T_apu": 0.1, "C_apu": 0, "g": 0})";
    auto stand_in = [&](const std::string& body) {
        std::ofstream(tool) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << args.string() << "\n" << body << "\n";
        fs::permissions(tool, fs::perms::owner_all);
    };
    const std::string cmd = "MMGP_OFFLOAD_RUN=" + tool.string() + " " + mmgp_bin() +
                            " profile --accelerator cuda --simulate 8:1000 --units 3 --repetitions 2 -o " + out.string();
    stand_in("echo '" + doc + "'");
    outcome r = sh(cmd, d.path);
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(slurp(out).find("\"T_apu\": 0.1") != std::string::npos);
    CHECK(slurp(args).find("--accelerator\ncuda\n--profile\n--simulate=8:1000\n--units\n3\n--repetitions\n2\n") != std::string::npos);
    CHECK(r.err.find("mmgp: note: no --platform: C_apu leaves out the empty grid's round trip") != std::string::npos);
    CHECK(slurp(args).find("--policy") == std::string::npos);  // blocking: the command line as before
    fs::remove(out);
    // --policy os reaches the program: a profile for runs whose host spins.
    r = sh(cmd + " --policy os", d.path);
    CHECK(r.status == 0);
    CHECK(slurp(args).find("\n--policy\nos\n") != std::string::npos);
    fs::remove(out);
    // An alignment whose name has a space reaches the program as one word, the option's value.
    const fs::path odd = d.path / "-my alignment.phy";
    std::ofstream(odd) << "4 10\na ACGTACGTAC\nb ACGTACGTAC\nc ACGTACGTAC\nd ACGTACGTAC\n";
    r = sh("cd " + d.path.string() + " && MMGP_OFFLOAD_RUN=" + tool.string() + " " + fs::absolute(mmgp_bin()).string() +
               " profile --accelerator cuda --alignment './-my alignment.phy' -o " + out.string(),
           d.path);
    CHECK(r.status == 0);
    CHECK(slurp(args).find("\n--alignment=./-my alignment.phy\n") != std::string::npos);
    fs::remove(out);
    // --platform reaches the program as given (one word), and -o may not name it.
    const fs::path plat = d.path / "my gpu.json";
    std::ofstream(plat) << "{}";
    r = sh(cmd + " --platform '" + plat.string() + "'", d.path);
    CHECK(r.status == 0);
    CHECK(r.err.find("no --platform") == std::string::npos);
    CHECK(slurp(args).find("\n--platform\n" + plat.string() + "\n") != std::string::npos);
    fs::remove(out);
    r = sh("MMGP_OFFLOAD_RUN=" + tool.string() + " " + mmgp_bin() + " profile --accelerator cuda --platform '" +
               plat.string() + "' -o '" + plat.string() + "'",
           d.path);
    CHECK(r.status == 2);
    CHECK(slurp(plat) == "{}");
    for (const auto& [body, says] : {std::pair{std::string("echo 'mmgp-offload-run: --accelerator cuda: no usable GPU' >&2; exit 77"),
                                               std::string("no usable GPU")},
                                     std::pair{std::string("echo '{\"schema\": \"mmgp/1\"}'"), std::string("no profile the engine reads")},
                                     std::pair{std::string("exit 3"), std::string("failed (status 3)")}}) {
        stand_in(body);
        r = sh(cmd, d.path);
        INFO(body << " -> " << r.err);
        CHECK(r.status == 1);
        CHECK(r.err.find(says) != std::string::npos);
        CHECK_FALSE(fs::exists(out));
    }
}

// ---- pool mode: A APU threads shared by the processes, p chosen per off-load ------------------------

namespace {

// An advisor whose prior says the loops split perfectly and cost nothing to split (dedicated accelerators),
// with learning off (refresh_every = 0): it asks for every APU a process can have, A / m.
std::shared_ptr<mmgp::advisor> eager_advisor(int apus) {
    mmgp::platform pl;
    pl.name = "test";
    pl.hpu_contexts = 2;
    pl.apus = apus;
    pl.O_offload = 1e-7;
    pl.T_csw = 1e-6;
    pl.alpha.value = 1.0;
    mmgp::application app;
    app.name = "test";
    app.decomp = mmgp::decomposition::task;
    app.N = 100;
    app.T_hpu = 100 * 1e-6;
    app.T_apu = 100 * 100e-6;
    app.C_apu = 0;
    app.g = 0;
    mmgp::advisor_options o;
    o.refresh_every = 0;
    return std::make_shared<mmgp::advisor>(pl, app, o);
}

// Asks for 1000 APUs every time and records what the runtime reported, to check the p <= idle bound and that the
// APUs in flight never exceed A (hooks run under the runtime's pool lock: no synchronisation needed).
struct greedy_scheduler final : K::offload_scheduler {
    int idle_seen = 0, in_flight = 0, max_in_flight = 0, apus = 0;
    std::int64_t over_idle = 0, not_all_idle = 0, starts = 0, ends = 0, resumed = 0, bad_finish = 0, units_begun = 0,
                 units_ended = 0, gaps = 0;
    const char* name() const override { return "greedy"; }
    int choose(const K::offload_state& s) override {
        idle_seen = s.idle_apus;
        apus = s.apus;
        return 1000;
    }
    void started(int, int p) override {
        ++starts;
        if (p > idle_seen) ++over_idle;
        if (p != idle_seen) ++not_all_idle;
        in_flight += p;
        max_in_flight = std::max(max_in_flight, in_flight);
    }
    void released(int, int p) override {
        ++ends;
        in_flight -= p;
    }
    void finished(int, int p, double seconds) override {
        ++resumed;
        if (!(seconds >= 0) || p < 1 || p > apus) ++bad_finish;
    }
    void host_gap(int, double) override { ++gaps; }
    void unit_begin(int) override { ++units_begun; }
    void unit_end(int) override { ++units_ended; }
};

std::int64_t histogram_total(const K::result& r) {
    std::int64_t n = 0;
    for (std::size_t p = 1; p < r.p_histogram.size(); ++p) n += r.p_histogram[p];
    return n;
}

}  // namespace

TEST_CASE("pool mode: edtlp, mgps and advisor run; per-unit results equal the fixed mode's and do not depend on p") {
    const K::config base = simulated_problem(240, 5);
    K::result ref = K::run(base);  // fixed mode, m = 1, p = 1
    REQUIRE(ref.unit_loglik.size() == 5);
    std::vector<double> pool_ref;
    for (int A : {1, 3, 8})
        for (int m : {1, 2, 4})
            for (const std::string name : {"edtlp", "mgps", "advisor"}) {
                K::config c = base;
                c.m = m;
                c.apus = A;
                c.policy = m == 2 ? K::host_policy::os : K::host_policy::edtlp;
                c.scheduler = name == "edtlp" ? K::make_edtlp_scheduler()
                              : name == "mgps" ? K::make_mgps_scheduler()
                                               : K::make_advisor_scheduler(eager_advisor(A));
                K::result r = K::run(c);
                INFO("A=" << A << " m=" << m << " scheduler " << name);
                CHECK(r.scheduler == name);
                CHECK(r.wall_s > 0);
                CHECK(r.t.offloads == ref.t.offloads);
                REQUIRE(r.p_histogram.size() == static_cast<std::size_t>(A) + 1);
                CHECK(r.p_histogram[0] == 0);
                CHECK(histogram_total(r) == r.t.offloads);
                if (name == "edtlp") CHECK(r.p_histogram[1] == r.t.offloads);
                if (name == "edtlp") CHECK(r.mean_p() == 1.0);
                CHECK(r.mean_p() >= 1.0);
                CHECK(r.mean_p() <= A);
                REQUIRE(r.unit_loglik.size() == 5);
                for (std::size_t u = 0; u < 5; ++u) CHECK(r.unit_loglik[u] == doctest::Approx(ref.unit_loglik[u]).epsilon(1e-9));
                // the A site chunks are reduced in site order whatever p each off-load got: bit-identical
                if (pool_ref.empty() && A == 8) pool_ref = r.unit_loglik;
                if (A == 8)
                    for (std::size_t u = 0; u < 5; ++u) CHECK(r.unit_loglik[u] == pool_ref[u]);
            }
}

TEST_CASE("pool mode: mgps follows [R]'s rule and the advisor its table") {
    K::config c = simulated_problem(240, 2);
    c.m = 1;
    c.apus = 4;
    // one process: the first window of A = 4 off-loads runs on one APU each, then U = 1 gives p = 4 / 1
    c.scheduler = K::make_mgps_scheduler();
    K::result r = K::run(c);
    REQUIRE(r.p_histogram.size() == 5);
    CHECK(r.p_histogram[1] == 4);
    CHECK(r.p_histogram[4] == r.t.offloads - 4);
    CHECK(r.clamped == 0);
    // two processes: windows where both off-loaded give U = 2, p = 2
    c.m = 2;
    c.units = 4;
    c.scheduler = K::make_mgps_scheduler();
    r = K::run(c);
    CHECK(r.p_histogram[2] > 0);
    // the eager advisor (no learning): A / m for the active processes, here m = 1 throughout
    c.m = 1;
    c.units = 2;
    c.scheduler = K::make_advisor_scheduler(eager_advisor(4));
    r = K::run(c);
    CHECK(r.p_histogram[4] == r.t.offloads);
}

TEST_CASE("pool mode: an off-load never gets more APUs than are idle, and the APUs in flight never exceed A") {
    for (int m : {1, 3, 6}) {
        K::config c = simulated_problem(240, 6);
        c.m = m;
        c.apus = 4;
        auto g = std::make_shared<greedy_scheduler>();
        c.scheduler = g;
        K::result r = K::run(c);
        INFO("m=" << m);
        CHECK(g->apus == 4);
        CHECK(g->starts == r.t.offloads);
        CHECK(g->ends == r.t.offloads);
        CHECK(g->resumed == r.t.offloads);
        CHECK(g->bad_finish == 0);
        CHECK(g->gaps == r.t.offloads);
        CHECK(g->units_begun == 6);
        CHECK(g->units_ended == 6);
        CHECK(g->over_idle == 0);
        CHECK(g->not_all_idle == 0);      // greedy: every idle APU
        CHECK(g->in_flight == 0);
        CHECK(g->max_in_flight <= 4);
        CHECK(r.clamped == r.t.offloads);  // it always asked for more than were idle
        if (m == 1) CHECK(r.p_histogram[4] == r.t.offloads);
        CHECK(histogram_total(r) == r.t.offloads);
    }
}

TEST_CASE("pool mode: synthetic program, bad configurations, mmgp-offload-run options") {
    K::config c;
    c.synthetic = true;
    c.synth = {50, 5e-6, 40e-6, 2e-6};
    c.m = 3;
    c.units = 3;
    c.apus = 4;
    c.scheduler = K::make_mgps_scheduler();
    K::result r = K::run(c);
    CHECK(r.t.offloads == 150);
    CHECK(histogram_total(r) == 150);
    CHECK(r.unit_loglik.empty());
    // every off-load's split work is done once over its A chunks, whatever p it got
    CHECK(r.synth_split_s >= 150 * 40e-6 * 0.999);
    c = K::config{};
    c.apus = -1;
    CHECK_THROWS_AS(K::run(c), mmgp::usage_error);
    c.apus = 8;
    c.simulate_taxa = 4;
    c.simulate_sites = 5;
    CHECK_THROWS_AS(K::run(c), mmgp::usage_error);  // more APUs than sites
    CHECK_THROWS_AS(K::make_scheduler("fifo"), mmgp::usage_error);
    CHECK_THROWS_AS(K::make_scheduler("advisor"), mmgp::usage_error);
    CHECK_THROWS_AS(K::make_scheduler("advisor", "/nonexistent/scenario.json"), mmgp::error);

    tmpdir d;
    check_offload_run_refuses({" --scheduler mgps", " --apus 4 --scheduler fifo", " --apus 4 --scheduler advisor",
                               " --apus 4 --advisor-scenario x.json",
                               " --apus 4 --scheduler advisor --advisor-scenario /nonexistent.json"},
                              d.path);
    auto j = offload_run_json(" --m 2 --apus 4 --scheduler mgps --synthetic 20:10:40:5 --units 2", d.path);
    CHECK(j["offloads"] == 40);
    CHECK(j["apus"] == 4);
    CHECK(j["scheduler"] == "mgps");
    std::int64_t n = 0;
    for (auto& [p, count] : j["offloads_by_p"].items()) n += count.get<std::int64_t>();
    CHECK(n == 40);
}
