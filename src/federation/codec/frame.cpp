#include "federation/codec/frame.hpp"

#include <limits>

namespace carrier::federation::codec {

namespace {

constexpr std::string_view kCrLf = "\r\n";

// Each body's fields in order; encode_body and read_body are the two directions of one layout.
Status encode_body(const NegotiateRequest& b, std::string& out) {
  put_u32(out, b.version);
  return encode_negotiator(b.hope, out);
}
Status encode_body(const EstablishRequest& b, std::string& out) {
  Status s = encode_remote_node(b.from, out);
  if (s) put_i32(out, b.session);
  return s;
}
Status encode_body(const PushRequest& b, std::string& out) {
  Status s = encode_basic_message(b.message, out);
  if (s) s = encode_forwarder(b.condition, out);
  if (s) put_i32(out, b.session);
  return s;
}
Status encode_body(const SendbackRequest& b, std::string& out) {
  Status s = encode_basic_message(b.message, out);
  if (s) put_i32(out, b.session);
  return s;
}
template <Operation Op>
Status encode_body(const ForwardingControl<Op>& b, std::string& out) {
  put_id(out, b.target);
  return put_pstring(out, b.selector, "forwarding selector");
}
Status encode_body(const SetMaxRateRequest& b, std::string& out) {
  put_u32(out, b.rate);
  put_u32(out, static_cast<std::uint32_t>(b.unit));
  return ok();
}
Status encode_body(const StringResult& b, std::string& out) {
  if (b.text.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    return unexpected(Errc::invalid_argument, "a result string cannot contain CR, LF or NUL");
  }
  out.append(b.text);
  out.append(kCrLf);
  return ok();
}
Status encode_body(const NegotiateResult& b, std::string& out) { return encode_negotiator(b.agreed, out); }
Status encode_body(const EstablishResult& b, std::string& out) { return encode_remote_node(b.node, out); }

Result<FrameBody> read_body(Operation op, WireReader& in, const Limits& limits) {
  switch (op) {
    case Operation::negotiate: {
      CARRIER_FED_TRY(version, in.u32("negotiate version"));
      CARRIER_FED_TRY(hope, read_negotiator(in, limits));
      return FrameBody(NegotiateRequest{version, std::move(hope)});
    }
    case Operation::establish: {
      CARRIER_FED_TRY(from, read_remote_node(in, limits));
      CARRIER_FED_TRY(session, in.i32("establish id"));
      return FrameBody(EstablishRequest{std::move(from), session});
    }
    case Operation::push: {
      CARRIER_FED_TRY(message, read_basic_message(in, limits));
      CARRIER_FED_TRY(condition, read_forwarder(in, limits));
      CARRIER_FED_TRY(session, in.i32("push session"));
      return FrameBody(PushRequest{std::move(message), std::move(condition), session});
    }
    case Operation::sendback: {
      CARRIER_FED_TRY(message, read_basic_message(in, limits));
      CARRIER_FED_TRY(session, in.i32("sendback session"));
      return FrameBody(SendbackRequest{std::move(message), session});
    }
    case Operation::stop_forwarding:
    case Operation::restart_forwarding: {
      CARRIER_FED_TRY(target, in.id("forwarding target"));
      CARRIER_FED_TRY(selector, in.pstring(limits.max_string_bytes, "forwarding selector"));
      if (op == Operation::stop_forwarding) {
        return FrameBody(StopForwardingRequest{target, std::string(selector)});
      }
      return FrameBody(RestartForwardingRequest{target, std::string(selector)});
    }
    case Operation::set_max_rate: {
      CARRIER_FED_TRY(rate, in.u32("setMaxRate rate"));
      const std::size_t unit_at = in.offset();
      CARRIER_FED_TRY(unit, in.u32("setMaxRate unit"));
      if (unit > static_cast<std::uint32_t>(RateUnit::messages_per_second)) {
        return in.fail(Errc::protocol_error, "setMaxRate unit", "unknown unit " + std::to_string(unit), unit_at);
      }
      return FrameBody(SetMaxRateRequest{rate, static_cast<RateUnit>(unit)});
    }
    case Operation::result: {
      // The text runs to the first CR LF, which must end the body; a bare CR or LF, or a NUL,
      // inside it is malformed.
      const std::size_t limit = limits.max_string_bytes + kCrLf.size();
      CARRIER_FED_TRY(all, in.bytes(in.remaining(), "result string"));
      if (all.size() > limit) {
        return in.fail(Errc::limit_exceeded, "result string",
                       "longer than " + std::to_string(limits.max_string_bytes) + " bytes", 0);
      }
      if (all.size() < kCrLf.size() || all.substr(all.size() - kCrLf.size()) != kCrLf) {
        return in.fail(Errc::protocol_error, "result string", "does not end with CR LF", 0);
      }
      const std::string_view text = all.substr(0, all.size() - kCrLf.size());
      if (const auto bad = text.find_first_of(std::string_view("\r\n\0", 3)); bad != std::string_view::npos) {
        return in.fail(Errc::protocol_error, "result string", "CR, LF or NUL inside the text", bad);
      }
      return FrameBody(StringResult{std::string(text)});
    }
    case Operation::negotiate_result: {
      CARRIER_FED_TRY(agreed, read_negotiator(in, limits));
      return FrameBody(NegotiateResult{std::move(agreed)});
    }
    case Operation::establish_result: {
      CARRIER_FED_TRY(node, read_remote_node(in, limits));
      return FrameBody(EstablishResult{std::move(node)});
    }
  }
  return in.fail(Errc::protocol_error, "operation",
                 "unknown operation " + std::to_string(static_cast<std::uint32_t>(op)), 0);
}

}  // namespace

const char* operation_name(std::uint32_t operation) noexcept {
  switch (static_cast<Operation>(operation)) {
    case Operation::negotiate: return "negotiate";
    case Operation::establish: return "establish";
    case Operation::push: return "push";
    case Operation::sendback: return "sendback";
    case Operation::stop_forwarding: return "stopForwarding";
    case Operation::restart_forwarding: return "restartForwarding";
    case Operation::set_max_rate: return "setMaxRate";
    case Operation::result: return "result";
    case Operation::negotiate_result: return "negotiate result";
    case Operation::establish_result: return "establish result";
  }
  return nullptr;
}

Operation Frame::operation() const {
  return std::visit([](const auto& b) { return std::decay_t<decltype(b)>::kOperation; }, body);
}

Status encode_frame(const Frame& frame, std::string& out) {
  const std::size_t start = out.size();
  out.append(kFrameHeaderBytes, '\0');
  Status s = std::visit([&](const auto& b) { return encode_body(b, out); }, frame.body);
  const std::size_t body_bytes = out.size() - start - kFrameHeaderBytes;
  if (s && body_bytes > std::numeric_limits<std::uint32_t>::max()) {
    s = unexpected(Errc::invalid_argument, "frame body longer than 2^32-1 bytes");
  }
  if (!s) {
    out.resize(start);
    return s;
  }
  std::string header;
  put_u32(header, static_cast<std::uint32_t>(body_bytes));
  put_u32(header, static_cast<std::uint32_t>(frame.operation()));
  put_u32(header, frame.request_id);
  out.replace(start, kFrameHeaderBytes, header);
  return ok();
}

Result<FrameBody> decode_frame_body(Operation operation, std::string_view body, const Limits& limits) {
  WireReader in(body, kFrameHeaderBytes);
  CARRIER_FED_TRY(decoded, read_body(operation, in, limits));
  const char* name = operation_name(static_cast<std::uint32_t>(operation));
  if (auto end = in.expect_end(name != nullptr ? name : "frame"); !end) {
    return unexpected(end.error());
  }
  return decoded;
}

}  // namespace carrier::federation::codec
