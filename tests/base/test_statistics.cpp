// The statistics module (mmgp/statistics.hpp): medians, MAD, quantiles, the sample's moments, the intervals of
// the median and Student's t, against values derived by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "mmgp/statistics.hpp"
#include "support.hpp"

using mmgp::test::approx;

TEST_CASE("median: the middle value of an odd count, the midpoint (a + b) / 2 of an even one") {
    CHECK(mmgp::median({7}) == 7);
    CHECK(mmgp::median({3, 1, 2}) == 2);
    CHECK(mmgp::median({5, 9, 1, 3, 7}) == 5);
    CHECK(mmgp::median({4, 1, 3, 2}) == 2.5);
    CHECK(mmgp::median({10, -2}) == 4);
    CHECK_THROWS_AS(mmgp::median({}), std::invalid_argument);
    // Two rules for an even count that differ in the last bit for this pair: (a + b) / 2 rounds the sum,
    // a + 0.5 * (b - a) (the linear quantile at 1/2, the calibration's rule) rounds the difference.
    const double a = 5.022385584334831e-06, b = 4.372102868316107e-05;
    CHECK(mmgp::median({b, a}) == (a + b) / 2);
    CHECK(mmgp::median({b, a}, mmgp::even_median::interpolated) == a + 0.5 * (b - a));
    CHECK(mmgp::median({b, a}) != mmgp::median({b, a}, mmgp::even_median::interpolated));
    // An odd count has one middle value whatever the rule.
    CHECK(mmgp::median({3, 1, 2}, mmgp::even_median::interpolated) == 2);
}

TEST_CASE("median absolute deviation and its factor to a standard deviation") {
    // median 3; |x - 3| = 2, 1, 0, 1, 97 -> median 1 (the outlier does not move it).
    CHECK(mmgp::median_abs_deviation({1, 2, 3, 4, 100}) == 1);
    // median (2 + 4) / 2 = 3; |x - 3| = 2, 1, 1, 5 -> sorted 1, 1, 2, 5 -> (1 + 2) / 2 = 1.5.
    CHECK(mmgp::median_abs_deviation({1, 2, 4, 8}) == 1.5);
    CHECK(mmgp::median_abs_deviation({6, 6, 6}) == 0);
    CHECK_THROWS_AS(mmgp::median_abs_deviation({}), std::invalid_argument);
    // 1 / Phi^-1(3/4) = 1 / 0.6744897501960817 = 1.4826022185056018, rounded to four decimals.
    CHECK(mmgp::mad_to_sd == 1.4826);
    CHECK(mmgp::mad_to_sd == doctest::Approx(1.0 / 0.6744897501960817).epsilon(1e-5));
}

TEST_CASE("quantile: linear between the order statistics at position q (n - 1)") {
    const std::vector<double> v = {5, 1, 4, 2, 3};
    CHECK(mmgp::quantile(v, 0.0) == 1);
    CHECK(mmgp::quantile(v, 1.0) == 5);
    CHECK(mmgp::quantile(v, 0.25) == 2);    // position 1
    CHECK(mmgp::quantile(v, 0.375) == 2.5);  // position 1.5
    CHECK(mmgp::quantile({10, 20}, 0.1) == approx(11));
    CHECK(mmgp::quantile(v, -1.0) == 1);  // q clamped to [0, 1]
    CHECK(mmgp::quantile(v, 2.0) == 5);
    CHECK_THROWS_AS(mmgp::quantile({}, 0.5), std::invalid_argument);
}

TEST_CASE("mean, sample standard deviation (n - 1) and coefficient of variation") {
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum to 32, sample variance 32 / 7.
    const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
    CHECK(mmgp::mean(v) == 5);
    CHECK(mmgp::sample_stddev(v) == approx(std::sqrt(32.0 / 7.0)));
    CHECK(mmgp::coefficient_of_variation(v) == approx(std::sqrt(32.0 / 7.0) / 5));
    CHECK(mmgp::sample_stddev({3}) == 0);
    CHECK(mmgp::coefficient_of_variation({-1, 1}) == 0);  // mean 0
    CHECK(mmgp::coefficient_of_variation({-2, -4}) == approx(std::sqrt(2.0) / 3));  // over |mean|
    CHECK_THROWS_AS(mmgp::mean({}), std::invalid_argument);
}

TEST_CASE("median_ci90: the ranks k, n + 1 - k of the exact binomial rule for n = 4..11") {
    // k is the largest rank with P(Binomial(n, 1/2) <= k - 1) <= 5 %:
    //   n = 4:  P(0) = 1/16 = 6.25 %                       -> no k: no interval
    //   n = 5:  P(0) = 1/32, P(<= 1) = 6/32 = 18.8 %       -> k = 1
    //   n = 6:  P(0) = 1/64, P(<= 1) = 7/64 = 10.9 %       -> k = 1
    //   n = 7:  P(0) = 1/128, P(<= 1) = 8/128 = 6.25 %     -> k = 1
    //   n = 8:  P(<= 1) = 9/256 = 3.5 %, P(<= 2) = 37/256  -> k = 2
    //   n = 9:  P(<= 1) = 10/512, P(<= 2) = 46/512 = 9.0 % -> k = 2
    //   n = 10: P(<= 1) = 11/1024, P(<= 2) = 56/1024 = 5.47 % -> k = 2
    //   n = 11: P(<= 2) = 67/2048 = 3.3 %, P(<= 3) = 232/2048 -> k = 3
    const int k_of_n[] = {0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
    for (int n = 4; n <= 11; ++n) {
        std::vector<double> xs;
        for (int i = n; i >= 1; --i) xs.push_back(10.0 * i);  // x_(r) = 10 r, given in reverse
        const auto [lo, hi] = mmgp::median_ci90(xs);
        const int k = k_of_n[n];
        CAPTURE(n);
        if (k == 0) {
            CHECK(std::isnan(lo));
            CHECK(std::isnan(hi));
        } else {
            CHECK(lo == 10.0 * k);
            CHECK(hi == 10.0 * (n + 1 - k));
        }
    }
    CHECK(std::isnan(mmgp::median_ci90({}).first));
}

TEST_CASE("median_ci95_approx: ranks n/2 -+ 1.96 sqrt(n) / 2, the range below 6 values") {
    CHECK(mmgp::median_ci95_approx({3, 1, 2}) == std::pair<double, double>{1, 3});
    CHECK(mmgp::median_ci95_approx({5, 4, 3, 2, 1}) == std::pair<double, double>{1, 5});
    // n = 10: half = 1.96 sqrt(10) / 2 = 3.099; ranks floor(1.901) = 1 and ceil(8.099) - 1 = 8 (0-based).
    std::vector<double> xs;
    for (int i = 1; i <= 10; ++i) xs.push_back(i);
    CHECK(mmgp::median_ci95_approx(xs) == std::pair<double, double>{2, 9});
    // 1..1001: half = 31.0; ranks floor(469.5) = 469 and ceil(531.5) - 1 = 531 (0-based): values 470 and 532.
    xs.clear();
    for (int i = 1001; i >= 1; --i) xs.push_back(i);
    CHECK(mmgp::median_ci95_approx(xs) == std::pair<double, double>{470, 532});
    CHECK_THROWS_AS(mmgp::median_ci95_approx({}), std::invalid_argument);
}

TEST_CASE("t_quantile_975: Student's t from the tables, linear between 30, 40, 60 and 120") {
    CHECK(mmgp::t_quantile_975(1) == 12.706);
    CHECK(mmgp::t_quantile_975(2) == 4.303);
    CHECK(mmgp::t_quantile_975(5) == 2.571);
    CHECK(mmgp::t_quantile_975(10) == 2.228);
    CHECK(mmgp::t_quantile_975(20) == 2.086);
    CHECK(mmgp::t_quantile_975(30) == 2.042);
    CHECK(mmgp::t_quantile_975(40) == approx(2.021));
    CHECK(mmgp::t_quantile_975(60) == approx(2.000));
    CHECK(mmgp::t_quantile_975(120) == approx(1.980));
    CHECK(mmgp::t_quantile_975(35) == approx(2.0315));  // halfway between 2.042 and 2.021
    CHECK(mmgp::t_quantile_975(90) == approx(1.990));   // halfway between 2.000 and 1.980
    CHECK(mmgp::t_quantile_975(121) == 1.960);
    CHECK(mmgp::t_quantile_975(100000) == 1.960);
    CHECK(mmgp::t_quantile_975(0) == std::numeric_limits<double>::infinity());
    CHECK(mmgp::t_quantile_975(-3) == std::numeric_limits<double>::infinity());
    // Decreasing towards the normal quantile.
    for (int dof = 1; dof < 200; ++dof) CHECK(mmgp::t_quantile_975(dof + 1) <= mmgp::t_quantile_975(dof));
}

TEST_CASE("t_quantile_95: Student's t from the tables, checked against the closed forms of 1 and 2 dof") {
    // 1 dof is Cauchy: tan(pi (0.95 - 1/2)); 2 dof: (2p - 1) / sqrt(2 p (1 - p)) at p = 0.95.
    CHECK(mmgp::t_quantile_95(1) == approx(std::tan(M_PI * 0.45)).epsilon(1e-4));
    CHECK(mmgp::t_quantile_95(2) == approx(0.9 / std::sqrt(2 * 0.95 * 0.05)).epsilon(1e-4));
    CHECK(mmgp::t_quantile_95(30) == 1.697);
    CHECK(mmgp::t_quantile_95(35) == approx(1.6905));  // halfway between 1.697 and 1.684
    CHECK(mmgp::t_quantile_95(121) == 1.645);
    CHECK(mmgp::t_quantile_95(0) == std::numeric_limits<double>::infinity());
    // Decreasing towards the normal quantile, below the two-sided 95 % one.
    for (int dof = 1; dof < 200; ++dof) {
        CHECK(mmgp::t_quantile_95(dof + 1) <= mmgp::t_quantile_95(dof));
        CHECK(mmgp::t_quantile_95(dof) < mmgp::t_quantile_975(dof));
    }
}
