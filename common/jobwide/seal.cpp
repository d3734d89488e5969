#include "common/jobwide/seal.hpp"

#include "common/util/munge.hpp"

namespace gos::jobwide {

std::optional<SealFailure> seal_part(const Payload &p, int ttl, const std::string &munge_socket, std::string &frame,
				     std::optional<uid_t> reader)
{
	std::string text, credential;
	if (auto why = encode_payload(p, text))
		return SealFailure{false, "the part does not encode: " + *why};
	if (auto why = munge::encode(text, ttl, munge_socket, credential, reader))
		return SealFailure{true, *why};
	Bytes bytes;
	if (auto why = encode_frame({Kind::part, p.node, p.job, credential}, bytes))
		return SealFailure{false, "the frame does not encode: " + *why};
	frame.assign(bytes.begin(), bytes.end());
	return std::nullopt;
}

} // namespace gos::jobwide
