// SVG plots with readable axes (cli/svg.hpp).
#include "svg.hpp"

#include <cmath>
#include <fmt/format.h>
#include <vector>


namespace mmgp::cli {

namespace {
double position(const svg_axis& a, double v) {  // 0..1 along the axis
    if (a.log) return (std::log(v) - std::log(a.lo)) / (std::log(a.hi) - std::log(a.lo));
    return (v - a.lo) / (a.hi - a.lo);
}
std::string tick_text(double v) { return fmt::format("{:g}", std::fabs(v) < 1e-12 ? 0.0 : v); }
}  // namespace

std::string xml_text(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::vector<double> axis_ticks(const svg_axis& a) {
    std::vector<double> out;
    if (a.log) {
        for (const std::vector<double>& steps : {std::vector<double>{1}, {1, 2, 5}, {1, 1.5, 2, 3, 5, 7}}) {
            out.clear();
            for (double d = std::pow(10, std::floor(std::log10(a.lo))); d <= a.hi * 1.0000001; d *= 10)
                for (double s : steps)
                    if (d * s >= a.lo * 0.9999999 && d * s <= a.hi * 1.0000001) out.push_back(d * s);
            if (out.size() >= 3) break;
        }
        if (out.size() >= 3) return out;
        out.clear();  // less than a decade: round linear steps, placed on the log axis
    }
    {
        const double span = a.hi - a.lo;
        const double raw = span / 5, mag = std::pow(10, std::floor(std::log10(raw)));
        const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
        for (double v = std::ceil(a.lo / step) * step; v <= a.hi + 1e-9 * span; v += step) out.push_back(v);
    }
    return out;
}

svg_plot::svg_plot(svg_axis x, svg_axis y, std::string title, double width, double height)
    : x_(std::move(x)), y_(std::move(y)), title_(std::move(title)), w_(width), h_(height) {}

double svg_plot::px(double v) const { return left + position(x_, v) * (w_ - left - right); }
double svg_plot::py(double v) const { return h_ - bottom - position(y_, v) * (h_ - top - bottom); }

std::string svg_plot::begin() const {
    std::string s = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" font-family=\"sans-serif\" "
        "font-size=\"11\">\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
        "<text x=\"{2}\" y=\"20\">{3}</text>\n"
        "<rect x=\"{2}\" y=\"{4}\" width=\"{5}\" height=\"{6}\" fill=\"none\" stroke=\"black\"/>\n",
        w_, h_, left, xml_text(title_), top, w_ - left - right, h_ - top - bottom);
    for (double t : axis_ticks(x_))
        s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>"
                         "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
                         px(t), h_ - bottom, h_ - bottom + 5, h_ - bottom + 17, tick_text(t));
    for (double t : axis_ticks(y_))
        s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"black\"/>"
                         "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                         left - 5, py(t), left, left - 7, py(t) + 4, tick_text(t));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", left + (w_ - left - right) / 2,
                     h_ - 12, xml_text(x_.title));
    s += fmt::format("<text x=\"16\" y=\"{0:.1f}\" transform=\"rotate(-90 16 {0:.1f})\" text-anchor=\"middle\">{1}</text>\n",
                     top + (h_ - top - bottom) / 2, xml_text(y_.title));
    return s;
}

}  // namespace mmgp::cli
