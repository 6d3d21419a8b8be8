#include "common/csv_cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <set>

namespace mculab {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Splits one line on commas; a field may be double-quoted ("" inside is a quote).
Result<std::vector<std::string>> SplitLine(std::string_view line, std::string_view where) {
  std::vector<std::string> fields;
  std::string cur;
  bool quoted = false;
  bool was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur.push_back(c);
      }
    } else if (c == '"' && Trim(cur).empty()) {
      quoted = true;
      was_quoted = true;
      cur.clear();
    } else if (c == ',') {
      fields.emplace_back(was_quoted ? cur : std::string(Trim(cur)));
      cur.clear();
      was_quoted = false;
    } else {
      cur.push_back(c);
    }
  }
  if (quoted)
    return MakeError(ErrorCode::kInvalidArgument, std::string(where) + ": unterminated quote");
  fields.emplace_back(was_quoted ? cur : std::string(Trim(cur)));
  return fields;
}

template <typename T>
std::optional<T> ParseInt(std::string_view s) {
  s = Trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) {
    // Accept integral floats such as "3.0" written by spreadsheets.
    double d = 0;
    auto [p2, ec2] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (ec2 != std::errc() || p2 != s.data() + s.size() || s.empty()) return std::nullopt;
    // In range first: converting a double outside T's range is undefined (found by fuzzing).
    if (!(d >= static_cast<double>(std::numeric_limits<T>::min()) &&
          d <= static_cast<double>(std::numeric_limits<T>::max()))) {
      return std::nullopt;
    }
    if (d != static_cast<double>(static_cast<T>(d))) return std::nullopt;
    return static_cast<T>(d);
  }
  return v;
}

}  // namespace

Result<std::vector<CsvLine>> ReadCsvLines(std::string_view text, std::string_view source) {
  const std::string src(source);
  if (text.size() > kMaxCsvBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     src + ": file is larger than " + std::to_string(kMaxCsvBytes) + " bytes");
  }
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF)
    text.remove_prefix(3);  // UTF-8 BOM from spreadsheets
  std::vector<CsvLine> lines;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty() || Trim(line).front() == '#') continue;
    auto fields = SplitLine(line, src + ": line " + std::to_string(number));
    if (!fields.ok()) return fields.error();
    lines.push_back(CsvLine{number, std::move(*fields)});
  }
  return lines;
}

Result<CaseTable> ParseCasesCsv(std::string_view text, const OpInfo& op, std::string_view source) {
  const std::string src(source);
  auto fail = [&](std::string msg) {
    return MakeError(ErrorCode::kInvalidArgument, src + ": " + msg);
  };
  auto lines = ReadCsvLines(text, source);
  if (!lines.ok()) return lines.error();

  CaseTable table;
  for (const auto& p : op.params) table.param_names.push_back(p.name);

  std::vector<int> column_to_param;  // -1: ignored, -2: the id column
  std::vector<int> param_to_column(op.params.size(), -1);
  std::vector<std::string> header;
  std::set<std::int64_t> ids;
  for (const CsvLine& line : *lines) {
    const std::string where = "line " + std::to_string(line.number);
    const std::vector<std::string>& fields = line.fields;
    if (header.empty()) {
      header = fields;
      column_to_param.assign(header.size(), -1);
      column_to_param[0] = -2;
      for (size_t c = 1; c < header.size(); ++c) {
        const std::string name = Lower(header[c]);
        if (name.empty()) return fail("line 1: column " + std::to_string(c + 1) + " has no name");
        for (size_t p = 0; p < op.params.size(); ++p) {
          const auto& prm = op.params[p];
          bool match =
              Lower(prm.name) == name ||
              std::find(prm.synonyms.begin(), prm.synonyms.end(), name) != prm.synonyms.end();
          if (!match) continue;
          if (param_to_column[p] >= 0) {
            return fail("line 1: columns '" + header[param_to_column[p]] + "' and '" + header[c] +
                        "' both name parameter " + prm.name + " of " + op.name);
          }
          param_to_column[p] = static_cast<int>(c);
          column_to_param[c] = static_cast<int>(p);
          break;
        }
        if (column_to_param[c] == -1) {
          table.warnings.push_back("column '" + header[c] + "' is not a parameter of " + op.name +
                                   "; ignored");
        }
      }
      for (size_t p = 0; p < op.params.size(); ++p) {
        if (param_to_column[p] >= 0) continue;
        const auto& prm = op.params[p];
        if (prm.default_value) {
          table.warnings.push_back("no column for " + prm.name + "; using " +
                                   std::to_string(*prm.default_value));
          continue;
        }
        std::string names = prm.name;
        for (const auto& s : prm.synonyms) names += ", " + s;
        return fail("line 1: no column for parameter " + prm.name + " of " + op.name +
                    " (accepted names: " + names + ")");
      }
      continue;
    }

    if (fields.size() != header.size()) {
      return fail(where + ": " + std::to_string(fields.size()) + " values, the header has " +
                  std::to_string(header.size()) + " columns");
    }
    CaseRow row;
    auto id = ParseInt<std::int64_t>(fields[0]);
    if (!id) {
      return fail(where + ", column '" + header[0] + "': " +
                  (fields[0].empty() ? std::string("missing case id")
                                     : "case id '" + fields[0] + "' is not an integer"));
    }
    if (!ids.insert(*id).second)
      return fail(where + ": case id " + std::to_string(*id) + " repeats");
    row.id = *id;
    row.params.resize(op.params.size());
    for (size_t p = 0; p < op.params.size(); ++p) {
      const int c = param_to_column[p];
      if (c < 0) {
        row.params[p] = *op.params[p].default_value;
        continue;
      }
      const std::string& cell = fields[c];
      if (Trim(cell).empty()) return fail(where + ", column '" + header[c] + "': missing value");
      auto v = ParseInt<std::int32_t>(cell);
      if (!v) {
        return fail(where + ", column '" + header[c] + "': '" + cell + "' is not an integer");
      }
      if (*v < op.params[p].min_value) {
        return fail(where + ", column '" + header[c] + "': " + std::to_string(*v) +
                    " is below the minimum " + std::to_string(op.params[p].min_value) + " for " +
                    op.params[p].name);
      }
      row.params[p] = *v;
    }
    table.rows.push_back(std::move(row));
    if (table.rows.size() > kMaxCsvCases)
      return fail("more than " + std::to_string(kMaxCsvCases) + " cases; split the sweep");
  }
  if (header.empty())
    return fail("empty file: expected a header line such as id," + table.param_names[0] + ",...");
  if (table.rows.empty()) return fail("no cases after the header line");
  return table;
}

Result<std::vector<std::int64_t>> ParseCaseIdsCsv(std::string_view text, std::string_view source) {
  auto lines = ReadCsvLines(text, source);
  if (!lines.ok()) return lines.error();
  auto fail = [&](std::size_t line, std::string msg) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}:{}: {}", source, line, msg));
  };
  std::vector<std::int64_t> ids;
  std::set<std::int64_t> seen;
  for (std::size_t i = 1; i < lines->size(); ++i) {  // [0] is the header
    const CsvLine& line = (*lines)[i];
    const std::string& cell = line.fields[0];
    auto id = ParseInt<std::int64_t>(cell);
    if (!id) {
      return fail(line.number,
                  fmt::format("the first column must be an integer case id, got '{}'", cell));
    }
    if (!seen.insert(*id).second)
      return fail(line.number, fmt::format("case id {} appears twice", *id));
    ids.push_back(*id);
  }
  if (ids.empty()) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: no cases (a header line, then one case id per line)", source));
  }
  return ids;
}

}  // namespace mculab
