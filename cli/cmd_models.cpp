// mmgp models: the models the engine evaluates, by name, each with how a run chooses it and the paper or
// measurement it follows (mmgp/models.hpp's list, formatted; nothing is computed here).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cmd_models.hpp"
#include "mmgp/models.hpp"

namespace mmgp::cli {

void setup_models(CLI::App& app, models_options& o) {
    auto* sub = app.add_subcommand("models", "List the models by name: the application models --model chooses, the "
                                             "communication models and the terms, each with its source");
    sub->add_flag("--json", o.json, "Print one JSON document");
}

namespace {

std::string models_json() {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const model_info& m : registered_models())
        list.push_back({{"name", m.name},
                        {"role", to_string(m.role)},
                        {"chosen", m.chosen},
                        {"summary", m.summary},
                        {"source", m.source},
                        {"section", "docs/MODEL.md §" + std::string(m.section)}});
    const nlohmann::ordered_json doc = {{"schema", "mmgp/1"}, {"kind", "models"}, {"models", list}};
    return doc.dump() + "\n";
}

std::string_view heading(model_role r) {
    switch (r) {
        case model_role::application: return "application models";
        case model_role::communication: return "communication models";
        case model_role::term: return "terms the mmgp model adds";
    }
    return "";
}

std::string models_text() {
    std::string out;
    model_role role{};
    bool first = true;
    for (const model_info& m : registered_models()) {
        if (first || m.role != role)
            out += fmt::format("{}{}\n", first ? "" : "\n", heading(m.role));
        first = false;
        role = m.role;
        out += fmt::format("  {:<18} {}\n", m.name, m.summary);
        out += fmt::format("  {:<18} chosen by: {}\n", "", m.chosen);
        out += fmt::format("  {:<18} source: {} (docs/MODEL.md §{})\n", "", m.source, m.section);
    }
    return out;
}

}  // namespace

int run_models(const models_options& o) {
    std::cout << (o.json ? models_json() : models_text()) << std::flush;
    return 0;
}

}  // namespace mmgp::cli
