// Internal: the cluster communication term ([C] §4.4, docs/MODEL.md §2): the primitives' names, their stage
// counts, the measured tables and the latency-bandwidth models (given, or fitted to the tables when the
// evaluator is built). Pure; calls nothing of the readers.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "mmgp/profile.hpp"

namespace mmgp::detail {

/// The communication models' names, as mmgp models lists them and a scenario's "communication" names them: the
/// tables where one covers a configuration (the latency-bandwidth model beyond), or the latency-bandwidth model
/// everywhere.
inline constexpr std::string_view table_model_name = "table";
inline constexpr std::string_view latency_bandwidth_model_name = "latency-bandwidth";
/// Whether a scenario's communication model takes the tables where they cover a configuration (the default).
inline bool tables_chosen(const scenario& s) { return s.communication != latency_bandwidth_model_name; }

/// The primitives' names as profiles write them, in the order of enum class primitive.
inline constexpr std::string_view primitive_names[] = {"allreduce", "bcast",   "reduce",   "barrier", "allgather",
                                                       "gather",    "scatter", "alltoall", "sendrecv"};
inline constexpr std::size_t primitive_count = std::size(primitive_names);
static_assert(static_cast<std::size_t>(primitive::sendrecv) + 1 == primitive_count);

/// How many intra-node and inter-node stages one operation of a primitive takes with `ppn`
/// processes on each of `nodes` nodes (binomial trees for collectives, pairwise for alltoall).
struct stages {
    double intra = 0.0;
    double inter = 0.0;
};
stages stage_counts(primitive prim, int nodes, int ppn) noexcept;

/// ceil(log2(x)) for x >= 1.
int ceil_log2(long long x) noexcept;

/// Fits a primitive's latency–bandwidth model to every table of that primitive by non-negative
/// least squares on relative errors. Empty when the tables cannot identify the intra-node part.
std::optional<comm_model> fit_comm_model(primitive prim, const std::vector<comm_table>& tables);

/// Each primitive's model, by primitive: the one the platform's network section gives, else, for a primitive
/// `patterns` use, the one fitted to its tables (none when they cannot identify it).
using comm_models = std::array<std::optional<comm_model>, primitive_count>;
comm_models models_for(const platform& pl, const std::vector<comm_pattern>& patterns);

/// Cost of one operation from a model.
double model_cost(const comm_model& m, primitive prim, int nodes, int ppn, double bytes) noexcept;

/// Cost of one operation from the table measured for exactly (prim, nodes, ppn), linearly
/// interpolated in bytes; nullopt when no table matches or bytes lies outside its sizes.
std::optional<double> table_cost(const std::vector<comm_table>& tables, primitive prim, int nodes, int ppn,
                                 double bytes) noexcept;

}  // namespace mmgp::detail
