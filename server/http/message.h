// The HTTP messages the router and the transport exchange (Boost.Beast, whole bodies in strings).
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace mculab::server::http {

namespace beast_http = boost::beast::http;
using Request = beast_http::request<beast_http::string_body>;
using Response = beast_http::response<beast_http::string_body>;

}  // namespace mculab::server::http
