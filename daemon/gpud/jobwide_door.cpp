#include "daemon/gpud/jobwide_door.hpp"

namespace gos::gpud {
namespace {

Admission refuse(std::string reason)
{
	return {Admission::Is::refused, std::move(reason), ""};
}

jobwide::Answer refused(std::string reason)
{
	return {jobwide::Answer::Word::refused, std::move(reason)};
}

} // namespace

Admission admit_frame(const JobwideWriter &writer, NodeTable &nodes, const jobwide::Frame &frame)
{
	if (!writer.knows(frame.job))
		return {Admission::Is::busy, "unknown_job", ""};
	if (!writer.member(frame.job, frame.node))
		return refuse("not_member");
	std::optional<std::string> addr = nodes.address_of(frame.node);
	if (!addr)
		return {Admission::Is::busy, "unknown_node", ""};	// and the table is read again
	return {Admission::Is::pass, "", *addr};
}

Opened open_frame(const jobwide::Frame &frame, const std::string &node_addr, const std::string &peer,
		  const SameAddress &same_address, const Unseal &unseal)
{
	Opened out;
	if (!same_address(node_addr, peer)) {
		out.refused = "not_its_address";
		out.again = true;
		return out;
	}
	munge::Decoded d = unseal(frame.credential);
	switch (d.status) {
	case munge::Decoded::Status::ok:
	case munge::Decoded::Status::replayed:
		break;
	case munge::Decoded::Status::expired:
		out.refused = "expired";
		return out;
	case munge::Decoded::Status::invalid:
		out.refused = "invalid";
		return out;
	case munge::Decoded::Status::other:
		out.refused = "munge_unavailable";
		out.again = true;
		return out;
	}
	if (d.uid != 0) {
		out.refused = "not_root";
		return out;
	}
	if (std::optional<std::string> why = jobwide::decode_payload(d.payload, out.payload)) {
		out.refused = *why;
		return out;
	}
	return out;
}

jobwide::Answer take_frame(JobwideWriter &writer, const jobwide::Frame &frame, const jobwide::Payload &payload,
			   bool &late)
{
	late = false;
	if (payload.job != frame.job || payload.node != frame.node)
		return refused("not_its_frame");
	report::NodePart part;
	nlohmann::json sent = nlohmann::json::parse(payload.part, nullptr, false);
	if (!sent.is_object())
		return refused("bad_part");
	try {
		part = sent.get<report::NodePart>();
	} catch (const nlohmann::json::exception &) {
		return refused("bad_part");
	}
	if (part.node != frame.node)
		return refused("not_its_frame");
	switch (writer.take(frame.job, payload.start, part, sent)) {
	case WriterTook::kept:
		return {jobwide::Answer::Word::ok, ""};
	case WriterTook::late:
		late = true;
		return {jobwide::Answer::Word::ok, ""};
	case WriterTook::dup:
		return {jobwide::Answer::Word::dup, ""};
	case WriterTook::not_in_run:
		return refused("not_member");
	case WriterTook::unknown_run:
		// Another run of a job known here: its writer's epilog may not
		// have come yet. The sender tries again.
		return {jobwide::Answer::Word::busy, ""};
	}
	return refused("bad_part");
}

} // namespace gos::gpud
