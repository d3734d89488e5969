// libFuzzer target: any bytes as a job-wide frame (its header first, as the
// writer reads it), as a credential's payload and as the writer's answer.
// Decoding must refuse or succeed without crashing, and what it accepts
// must encode back: the frame and the answer to the same bytes, the
// payload to text that decodes to the same fields.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "common/jobwide/frame.hpp"

namespace gj = gos::jobwide;

namespace {

void frame(std::span<const std::uint8_t> bytes)
{
	std::size_t total = 0;
	if (gj::check_header(bytes, total))
		return;
	if (total > gj::frame_max_bytes || total < gj::frame_header_size)
		std::abort();
	gj::Frame f;
	if (total > bytes.size() || gj::decode_frame(bytes.first(total), f))
		return;
	gj::Bytes again;
	if (gj::encode_frame(f, again) || !std::equal(again.begin(), again.end(), bytes.begin(), bytes.begin() + total) ||
	    again.size() != total)
		std::abort();
}

void payload(std::string_view text)
{
	gj::Payload p, back;
	if (gj::decode_payload(text, p))
		return;
	std::string again;
	if (gj::encode_payload(p, again) || gj::decode_payload(again, back) || !(back == p))
		std::abort();
}

void answer(std::string_view line)
{
	gj::Answer a;
	if (gj::decode_answer(line, a))
		return;
	std::string again;
	if (gj::encode_answer(a, again) || again != line)
		std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	const std::string_view text(reinterpret_cast<const char *>(data), size);
	frame({data, size});
	payload(text);
	answer(text);
	return 0;
}
