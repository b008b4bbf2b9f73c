// JSON output of the tools and mkfs, for either nlohmann::json or nlohmann::ordered_json.
#pragma once

#include <ostream>

namespace gdfs::json_text {

// `j` indented by two spaces, then a newline. Names are arbitrary bytes and JSON needs UTF-8, so
// invalid sequences become U+FFFD instead of an exception.
template <class Json>
void print(std::ostream& out, const Json& j) {
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace gdfs::json_text
