// How the SQLite store writes lists and maps into columns: comma lists of integers and names (the
// one list rule, common/lists.h), tags as a JSON object. db-internal.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mculab::db {

std::string JoinInts(const std::vector<std::int32_t>& v);
std::vector<std::int32_t> SplitInts(const std::string& s);
std::string JoinStrings(const std::vector<std::string>& v);
std::vector<std::string> SplitStrings(const std::string& s);
std::string TagsToJson(const std::map<std::string, std::string>& tags);
std::map<std::string, std::string> TagsFromJson(const std::string& text);

}  // namespace mculab::db
