// SVG plots with axes people can read: a frame, tick marks with their values (1-2-5 steps on log axes),
// axis titles with units. Used by predict --plot (the time-cost front) and tune --plot.
#pragma once

#include <string>
#include <vector>

namespace mmgp::cli {

/// One axis: its range (both > 0 on a log axis), whether it is logarithmic, and its title with the unit.
struct svg_axis {
    double lo = 0, hi = 1;
    bool log = true;
    std::string title;
};

/// A square-ish plot area: maps data to pixels and draws the frame, the ticks and the titles.
class svg_plot {
public:
    svg_plot(svg_axis x, svg_axis y, std::string title, double width = 560, double height = 460);
    double px(double v) const;
    double py(double v) const;
    /// The document up to the plot area's content (frame, ticks, titles); add points, then finish().
    std::string begin() const;
    static std::string finish() { return "</svg>\n"; }

private:
    svg_axis x_, y_;
    std::string title_;
    double w_, h_;
    static constexpr double left = 72, right = 24, top = 36, bottom = 52;
};

/// The tick values of an axis: 1-2-5 steps per decade on a log axis (decades only when that gives enough),
/// round steps on a linear one; at least two inside [lo, hi].
std::vector<double> axis_ticks(const svg_axis& a);

/// Text for an SVG element or attribute: &, <, >, " escaped.
std::string xml_text(const std::string& s);

}  // namespace mmgp::cli
