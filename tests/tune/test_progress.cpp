// A run's total time from its progress lines (mmgp::project_progress, mmgp::progress_past_bound: tune/progress.cpp)
// on hand-computed cases: the rate after the warm-up read at the total, its error, the earliest end at the fastest
// rate so far, and the stop rule.
#include <doctest/doctest.h>

#include <cmath>

#include "mmgp/tune.hpp"

TEST_CASE("tune progress: a steady rate after a slow start projects the total exactly") {
    // A start-up of 2 s to step 0, then 0.01 s a step: steps 100..500 at 3..7 s. Total 1000 steps: 12 s.
    std::vector<mmgp::progress_point> pts = {{2.0, 0}};
    for (int c = 100; c <= 500; c += 100) pts.push_back({2.0 + 0.01 * c, static_cast<double>(c)});
    const mmgp::progress_projection p = mmgp::project_progress(pts, 1000);
    REQUIRE(p.usable);
    CHECK(p.total_s == doctest::Approx(12.0));
    // On a line, so the error is the looks' alone: each point up to one look (0.2 s) late, variance 0.2^2 / 12, at
    // 1000 steps from 5 points at mean count 300 (Sxx = 100000): sqrt(0.2^2 / 12 (1/5 + 700^2 / 100000)), 3 dof.
    CHECK(p.sd_s == doctest::Approx(std::sqrt(0.04 / 12 * (0.2 + 4.9))));
    CHECK(p.dof == 3);
    // Clearly past a bound of 10 s by a noise of 5 %: the noise 1.645 x 0.05 and the projection's error, Student's
    // 2.353 (3 dof) x 0.1304 / 12, in quadrature: 12 e^(-0.0861) = 11.01 s > 10 s.
    CHECK(mmgp::progress_past_bound(p, 10.0, 0.05));
    // Not clearly past 11.5 s: 11.01 s < 11.5 s.
    CHECK_FALSE(mmgp::progress_past_bound(p, 11.5, 0.05));
    CHECK_FALSE(mmgp::progress_past_bound(p, 0.0, 0.05));  // no bound: nothing to be past
}

TEST_CASE("tune progress: the warm-up is left out, and too few points project nothing") {
    // The first point and counts below a tenth of the total are the warm-up: a slow first 50 steps do not count.
    std::vector<mmgp::progress_point> pts = {{0.5, 10}, {5.0, 50}, {6.0, 100}, {7.0, 200}, {8.0, 300}};
    const mmgp::progress_projection p = mmgp::project_progress(pts, 1000);
    REQUIRE(p.usable);
    CHECK(p.total_s == doctest::Approx(15.0));  // 5 s + 0.01 s a step
    CHECK_FALSE(mmgp::project_progress({{0.5, 10}, {6.0, 100}}, 1000).usable);
    CHECK_FALSE(mmgp::project_progress(pts, 0).usable);
    // Two points past the warm-up are too few for the fit: the earliest end stands in, the rest at the fastest
    // rate so far, 100 steps in 1 s less one look (0.2 s): 7 s + 800 / 125 = 13.4 s, with no error of its own.
    const mmgp::progress_projection early = mmgp::project_progress({{0.5, 10}, {6.0, 100}, {7.0, 200}}, 1000);
    REQUIRE(early.usable);
    CHECK(early.total_s == doctest::Approx(13.4));
    CHECK(early.sd_s == 0);
    // With three points past the warm-up the fit alone projects: 15 s above, not the earliest end, 8 s + 700 /
    // 125 = 13.6 s.
}

TEST_CASE("tune progress: a run too slow to leave the warm-up is projected at its earliest end") {
    // A start-up of 10 s to step 0, then 100 steps every 10 s: by 30 s, 200 of 10,000 steps, all in the warm-up
    // (a tenth, 1,000). The fastest rate so far, 100 steps in 10 s less one look (9.8 s), ends the other 9,800 in
    // 960.4 s at the soonest.
    const std::vector<mmgp::progress_point> pts = {{10.0, 0}, {20.0, 100}, {30.0, 200}};
    const mmgp::progress_projection p = mmgp::project_progress(pts, 10000);
    REQUIRE(p.usable);
    CHECK(p.total_s == doctest::Approx(990.4));
    CHECK(p.sd_s == 0);
    CHECK(mmgp::progress_past_bound(p, 60.0, 0.1));
    // A faster stretch sets the rate: 100 steps in 2 s (1.8 s counted), so 9,800 more in 176.4 s.
    CHECK(mmgp::project_progress({{10.0, 0}, {12.0, 100}, {30.0, 200}}, 10000).total_s == doctest::Approx(206.4));
    // Lines that came in one burst, one look after the point before: the rate is taken back to a point two looks
    // earlier (9,900 steps in 10.2 s less a look), a fast stretch, not a slow one: 100 more steps in 0.1 s.
    CHECK(mmgp::project_progress({{10.0, 0}, {20.0, 100}, {20.2, 9900}}, 10000).total_s ==
          doctest::Approx(20.2 + 100 / (9900 / 10.0)));
    // Half the steps in the burst: still a fast stretch (4,900 more in 0.2 s would be faster yet), not the 10 steps
    // a second before it: the other 5,000 in 10 s.
    CHECK(mmgp::project_progress({{10.0, 0}, {20.0, 100}, {20.2, 5000}}, 10000).total_s ==
          doctest::Approx(20.2 + 5000 / (5000 / 10.0)));
    // Two points: nothing yet.
    CHECK_FALSE(mmgp::project_progress({{10.0, 0}, {20.0, 100}}, 10000).usable);
}

TEST_CASE("tune progress: a noisy rate gives the projection an error, and the stop waits for it") {
    // Four points near a rate of 0.01 s a step, at c = 200, 300, 400, 500 (total 1000).
    const std::vector<mmgp::progress_point> pts = {{0, 0}, {2.1, 200}, {2.9, 300}, {4.1, 400}, {4.9, 500}};
    const mmgp::progress_projection p = mmgp::project_progress(pts, 1000);
    REQUIRE(p.usable);
    // Least squares by hand: mean c 350, mean t 3.5; deviations of c -150, -50, 50, 150 and of t -1.4, -0.6,
    // 0.6, 1.4: Sxx = 50000, Sxy = 480, b = 0.0096 s a step, a = 3.5 - 0.0096 x 350 = 0.14 s; at 1000: 9.74 s.
    CHECK(p.total_s == doctest::Approx(9.74));
    // Residuals 0.04, -0.12, 0.12, -0.04: their squares sum to 0.032, s^2 = 0.032 / 2 = 0.016; the error at 1000
    // is sqrt(0.016 (1/4 + 650^2 / 50000)) = sqrt(0.016 x 8.7).
    CHECK(p.sd_s == doctest::Approx(std::sqrt(0.016 * 8.7)));
    // The stop lowers it by the noise's 1.645 sd and the projection's Student 95 % quantile (2 dof: 2.920).
    const double noise = 1.6448536269514722 * 0.05, rel = 2.920 * p.sd_s / p.total_s;
    const double low = p.total_s * std::exp(-std::sqrt(noise * noise + rel * rel));
    CHECK(mmgp::progress_past_bound(p, low * 0.99, 0.05));
    CHECK_FALSE(mmgp::progress_past_bound(p, low * 1.01, 0.05));
    // What a run so stopped is recorded as taking at least (measurement::run::past_bound_s): that low end.
    CHECK(mmgp::progress_low_end(p, 0.05) == doctest::Approx(low).epsilon(1e-3));
    CHECK(mmgp::progress_low_end(mmgp::progress_projection{}, 0.05) == 0);  // nothing projected
}

TEST_CASE("tune progress: three points that fall on a line by the looks' rounding do not stop a run that meets its bound") {
    // A recorded GROMACS run at 1.33 s a thousand steps (10,000 steps in 13.68 s), read at looks of 0.2 s after a
    // slower start: counts 1000, 1100 and 1200 at 1.8, 2.0 and 2.2 s. The line through them projects 19.8 s with no
    // residual at all; the looks' rounding (0.2^2 / 12 a point) and Student's quantile for 1 dof keep a bound of
    // 13.7 s, which the run met, from counting as clearly passed.
    const std::vector<mmgp::progress_point> pts = {{0.4, 0}, {1.8, 1000}, {2.0, 1100}, {2.2, 1200}};
    const mmgp::progress_projection p = mmgp::project_progress(pts, 10000);
    REQUIRE(p.usable);
    CHECK(p.total_s == doctest::Approx(19.8));
    CHECK(p.sd_s == doctest::Approx(std::sqrt(0.04 / 12 * (1.0 / 3 + 8900.0 * 8900.0 / 20000))));
    CHECK(p.dof == 1);
    CHECK_FALSE(mmgp::progress_past_bound(p, 13.7, 0.05));
    // Its error is real but finite: a bound far below the projection is still clearly passed.
    CHECK(mmgp::progress_past_bound(p, 2.0, 0.05));
}
