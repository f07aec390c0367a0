// mmgp validate FILE: predicted against measured for every case of a validation file.
#include <cmath>
#include <fmt/format.h>
#include <iostream>

#include "common.hpp"

namespace mmgp::cli {

void setup_validate(CLI::App& app, validate_options& o) {
    auto* sub = app.add_subcommand("validate", "Compare predictions with measured run times (per case and summary)");
    sub->add_option("file", o.file, "Validation file (schema mmgp/1, kind validation) or a bundled one (edtlp-table1)")
        ->required();
    sub->add_option("--model", o.model, "eq11 or mmgp (default mmgp)");
    sub->add_flag("--json", o.json, "Print one JSON document");
    sub->add_option("--max-mean-err", o.max_mean, "Exit 1 when the mean absolute error (%) exceeds this");
    sub->add_option("--max-err", o.max_max, "Exit 1 when the largest absolute error (%) exceeds this");
}

int run_validate(const validate_options& o) {
    model_kind kind = parse_model_option(o.model);
    validation_report rep = run_validation(o.file, kind);
    std::string out;
    if (o.json) {
        out += fmt::format("{{\"file\": {}, \"name\": {}, \"model\": \"{}\",\n\"cases\": [\n", quote(rep.file),
                           quote(rep.name), to_string(kind));
        for (std::size_t i = 0; i < rep.cases.size(); ++i) {
            const auto& c = rep.cases[i];
            out += fmt::format(
                "  {{\"label\": {}, \"group\": {}, \"m\": {}, \"p\": {}, \"nodes\": {}, \"policy\": \"{}\", "
                "\"measured_s\": {}, \"predicted_s\": {}, \"err_pct\": {}, \"source\": {}, \"breakdown\": {}}}{}\n",
                quote(c.label), quote(c.group), c.c.m, c.c.p, c.c.nodes, to_string(c.c.pol), num(c.measured_s),
                num(c.predicted_s), num(c.err_pct), quote(c.source), breakdown_json(c.parts),
                i + 1 < rep.cases.size() ? "," : "");
        }
        out += "],\n\"groups\": [";
        for (std::size_t i = 0; i < rep.groups.size(); ++i) {
            const auto& g = rep.groups[i];
            out += fmt::format(
                "{}\n  {{\"group\": {}, \"cases\": {}, \"predicted_best\": {}, \"measured_best\": {}, \"optimal_hit\": {}, "
                "\"regret_pct\": {}}}",
                i ? "," : "", quote(g.group), g.cases, quote(g.predicted_best), quote(g.measured_best),
                g.optimal_hit ? "true" : "false", num(g.regret_pct));
        }
        out += fmt::format(
            "],\n\"summary\": {{\"cases\": {}, \"mean_abs_err_pct\": {}, \"max_abs_err_pct\": {}, \"std_abs_err_pct\": {}, "
            "\"optimal_hit\": {}, \"regret_pct\": {}}}}}\n",
            rep.cases.size(), num(rep.mean_abs_err_pct), num(rep.max_abs_err_pct), num(rep.std_abs_err_pct),
            rep.groups.empty() ? "null" : rep.optimal_hit ? "true" : "false", rep.groups.empty() ? "null" : num(rep.regret_pct));
    } else {
        out += fmt::format("{} ({}): model {}, {} cases\n\n", rep.name, rep.file, to_string(kind), rep.cases.size());
        out += fmt::format("{:<36} {:>12} {:>12} {:>8}  {}\n", "case", "measured", "predicted", "error", "source");
        for (const auto& c : rep.cases)
            out += fmt::format("{:<36} {:>12} {:>12} {:>+7.2f}%  {}\n", c.label, human_time(c.measured_s),
                               human_time(c.predicted_s), c.err_pct, c.source);
        out += fmt::format("\n|error|: mean {:.2f} %, max {:.2f} %, standard deviation {:.2f} % over {} cases\n",
                           rep.mean_abs_err_pct, rep.max_abs_err_pct, rep.std_abs_err_pct, rep.cases.size());
        for (const auto& g : rep.groups)
            out += fmt::format("group {}: predicted best {}, measured best {}: {} (regret {:.2f} %)\n", g.group,
                               g.predicted_best, g.measured_best, g.optimal_hit ? "optimum hit" : "optimum missed",
                               g.regret_pct);
    }
    std::cout << out << std::flush;
    if ((o.max_mean >= 0 && rep.mean_abs_err_pct > o.max_mean) || (o.max_max >= 0 && rep.max_abs_err_pct > o.max_max)) {
        std::cerr << fmt::format("mmgp: validate: error bound exceeded (mean {:.2f} %, max {:.2f} %)\n",
                                 rep.mean_abs_err_pct, rep.max_abs_err_pct);
        return 1;
    }
    return 0;
}

}  // namespace mmgp::cli
