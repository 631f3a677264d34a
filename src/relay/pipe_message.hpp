#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/message.hpp"
#include "relay/codec/jxme_message.hpp"

// How a relay peer's pipe messages meet STOMP, MQTT and HTTP clients (docs/relay.md, "Mapping"):
// a send's application elements (every element outside the proxy namespace and the jxta
// endpoint addresses) become a broker message whose body is the empty namespace's `message`
// element (its MIME type the content type), each other element with text content a property
// (`sender`, `records:fileReference`), and the property `jxme-elements` the base64 of the
// elements themselves, so that relay listeners get them back byte-identical. A message from any
// other client reaches a relay listener as its properties (a `ns:name` property in namespace
// `ns`) and a `message` element holding its body.
namespace carrier::relay {

inline constexpr std::string_view kElementsProperty = "jxme-elements";

// The application elements of a send request.
std::vector<codec::Element> application_elements(const codec::Message& request);
// Fills `m`'s body, content type and properties from `elements`.
void fill_message(const std::vector<codec::Element>& elements, model::Message& m);
// The elements a relay listener receives for `m`.
std::vector<codec::Element> elements_of(const model::Message& m);

}  // namespace carrier::relay
