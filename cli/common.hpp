// The mmgp command: shared pieces of the subcommands. No model logic lives here.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mmgp/error.hpp"
#include "mmgp/io.hpp"
#include "mmgp/launch.hpp"
#include "mmgp/model.hpp"
#include "mmgp/search_result.hpp"
#include "mmgp/validate.hpp"
#include "mmgp/words.hpp"

namespace mmgp::cli {

/// Refuses (usage_error) an assignment option (--set, --constant) whose KEY appears twice in `assignments`.
void refuse_repeated_keys(const std::string& option, const std::vector<std::string>& assignments);

/// Parses "N" or "LO:HI" (1 <= LO <= HI) for a range option; throws usage_error naming the option.
int_range parse_range(const std::string& option, const std::string& text);
/// Parses a --model value.
model_kind parse_model_option(const std::string& text);

/// Parses a --policy value.
policy parse_policy_option(const std::string& text);

/// Shortest round-trip text of a double (CSV output and text): "1", "0.25".
std::string num(double v);
/// A double as every JSON document writes it (nlohmann::json's number format: "1.0", "0.25"; null when not
/// finite): predict's streamed JSON rows, written without a JSON object each.
std::string json_num(double v);
/// A number for a JSON document: itself when finite, else null.
nlohmann::ordered_json json_number(double v);
using mmgp::human_time;  // a time for people (mmgp/words.hpp)
using mmgp::label;       // a configuration for people
/// The breakdown as a JSON object (seconds): for a document (breakdown_object), and as text for predict's
/// streamed rows (breakdown_json, on the hot path); both from one list of keys (output.cpp).
nlohmann::ordered_json breakdown_object(const breakdown& b);
std::string breakdown_json(const breakdown& b);
/// JSON string literal, as nlohmann::json writes it.
std::string quote(const std::string& s);

/// The model and search-space options shared by predict and launch: --model, --policy, --m, --p, --nodes.
struct space_options_cli {
    std::string model = "mmgp", policy, m, p, nodes;
    bool model_named = false;       ///< --model was given: it overrides the scenario's "model"
    std::vector<std::string> sets;  ///< --set SECTION.KEY=VALUE
    double max_age_days = 90;       ///< --max-age: a calibrated platform older than this is warned about
    /// True when --m, --p or --nodes was given (the space was narrowed by hand).
    bool narrowed() const { return !m.empty() || !p.empty() || !nodes.empty(); }
};
void add_space_options(CLI::App* sub, space_options_cli& o);
/// The model a command evaluates: --model's when given, else the one the scenario names, else mmgp.
model_kind model_of(const space_options_cli& o, const scenario& s);
/// The scenario `profile` with the --set edits of `o` and its --m, --p, --nodes (read as search edits: the reader
/// checks the profiles cover the narrowed space), then its --policy; warns (stderr) about a calibrated platform
/// from another machine, old, measured too few times or flagged noisy.
scenario load_with_options(const std::string& profile, const space_options_cli& o);
/// One "mmgp: warning: ..." line for each of platform_warnings(pl, this machine, now), held until
/// flush_warnings(): printed on stderr when the command has checked its input and begins its work or output
/// (main flushes them after a subcommand returns), dropped when the input is refused (one line for bad input).
void warn_about_platform(const platform& pl, double max_age_days);
/// One held warning line naming the columns of a runs file that are not read (none: nothing).
void warn_about_columns(const std::string& file, const std::vector<std::string>& ignored);
/// One held line (a note: "mmgp: note: ..."), printed and dropped with the warnings.
void hold_note(const std::string& text);
/// One held warning ("mmgp: warning: ..."), printed and dropped with the others.
void hold_warning(const std::string& text);
/// Prints the held warnings on stderr.
void flush_warnings();
/// Forgets the held warnings (the command was refused).
void drop_warnings();

/// `text` as one line of a terminal: line breaks, tabs and the other control bytes (C0, DEL, the C1 controls'
/// UTF-8 forms) written as escapes (\n, \t, \x1b), so that a value holding them neither splits a message nor
/// drives the terminal.
std::string one_line(std::string_view text);

/// --set SECTION.KEY=VALUE, repeatable: what-if edits of the profile (SECTION platform, application or search;
/// only platform for fit). Added by add_space_options() for predict and launch.
/// A repeatable SECTION.KEY=VALUE option checked by the option table's row for `name`: one value each time.
CLI::Option* add_assignments(CLI::App* sub, const std::string& name, std::vector<std::string>& target,
                             const std::string& help);
void add_set_option(CLI::App* sub, std::vector<std::string>& sets, const std::string& help_sections);
/// The edits of --set options, as JSON merge patches per section: VALUE is JSON when it parses (32, 2e-6,
/// true, null to remove a key, [1,8], {...}, "text"), else a string; a dotted KEY edits a nested object
/// (platform.network.models.allreduce.inter.latency_s=1e-6). A later --set of the same key wins.
scenario_edits edits_of(const std::vector<std::string>& sets);

/// A streamed report was cut short by an error: main's error line then says that standard output holds an
/// incomplete report (predict_report.hpp's out_stream marks it).
void mark_report_incomplete() noexcept;
bool report_incomplete() noexcept;

/// What a profile writer emits.
enum class profile_kind { platform, application };
/// The one output path of the profile writers (calibrate, profile, fit): the document must read back as a
/// profile of its kind (the schema's key tables and the reader's rules); then it replaces `path`
/// atomically, or goes to standard output when `path` is empty. A document the reader refuses is the
/// writer's fault: std::logic_error (exit status 1, "internal error"), nothing written — unless it was described
/// from an input's records (`from`: calibrate --from), which are then at fault: an input_error naming them.
struct described_from {
    std::string file;     ///< the input profile
    std::string records;  ///< where its records are, e.g. "/measurements"
    std::string expected = "records that describe a platform the engine reads";  ///< what they should have been
    std::string found = "records that give";  ///< followed by the reader's complaint
};
/// write_profile's check alone: for a writer that prints the document itself. The text is read as a file in
/// the folder of `path` (the working directory when "") would be: its relative references resolve there.
void check_profile(const std::string& text, profile_kind kind, std::string_view command,
                   const described_from* from = nullptr, const std::string& path = "");
void write_profile(const std::string& path, const std::string& text, profile_kind kind, std::string_view command,
                   const described_from* from = nullptr);

}  // namespace mmgp::cli
