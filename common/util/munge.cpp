// libmunge behind munge.hpp: a context per call, everything libmunge
// allocates freed on every path.
#include "common/util/munge.hpp"

#include <climits>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include <munge.h>

namespace gos::munge {

namespace {

struct CtxFree {
	void operator()(munge_ctx_t c) const { munge_ctx_destroy(c); }
};
using Ctx = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, CtxFree>;

struct MemFree {
	void operator()(void *p) const { std::free(p); }
};

// A context talking to SOCKET, or nothing (no memory).
Ctx context(const std::string &socket)
{
	Ctx ctx(munge_ctx_create());
	if (ctx && munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS)
		ctx.reset();
	return ctx;
}

std::string error_of(munge_ctx_t ctx, munge_err_t err)
{
	const char *text = munge_ctx_strerror(ctx);
	return text ? text : munge_strerror(err);
}

Decoded::Status status_of(munge_err_t err)
{
	switch (err) {
	case EMUNGE_SUCCESS: return Decoded::Status::ok;
	case EMUNGE_CRED_EXPIRED: return Decoded::Status::expired;
	case EMUNGE_CRED_REPLAYED: return Decoded::Status::replayed;
	// The credential's fault, whatever the detail (munged reports a bad
	// MAC as invalid on purpose); a credential from the future too.
	case EMUNGE_BAD_LENGTH:
	case EMUNGE_BAD_CRED:
	case EMUNGE_BAD_VERSION:
	case EMUNGE_BAD_CIPHER:
	case EMUNGE_BAD_MAC:
	case EMUNGE_BAD_ZIP:
	case EMUNGE_BAD_REALM:
	case EMUNGE_CRED_INVALID:
	case EMUNGE_CRED_REWOUND:
	case EMUNGE_CRED_UNAUTHORIZED: return Decoded::Status::invalid;
	default: return Decoded::Status::other;
	}
}

} // namespace

std::optional<std::string> encode(std::string_view payload, int ttl, const std::string &socket,
				  std::string &credential, std::optional<uid_t> reader)
{
	if (payload.size() > INT_MAX)
		return "payload too long";
	Ctx ctx = context(socket);
	if (!ctx)
		return "out of memory";
	munge_err_t err = munge_ctx_set(ctx.get(), MUNGE_OPT_TTL, ttl);
	if (err == EMUNGE_SUCCESS && reader)
		err = munge_ctx_set(ctx.get(), MUNGE_OPT_UID_RESTRICTION, *reader);
	char *raw = nullptr;
	if (err == EMUNGE_SUCCESS)
		err = munge_encode(&raw, ctx.get(), payload.data(), static_cast<int>(payload.size()));
	const std::unique_ptr<char, MemFree> cred(raw);
	if (err != EMUNGE_SUCCESS)
		return error_of(ctx.get(), err);
	credential = cred.get();
	return std::nullopt;
}

Decoded decode(const std::string &credential, const std::string &socket)
{
	Decoded d;
	Ctx ctx = context(socket);
	if (!ctx) {
		d.error = "out of memory";
		return d;
	}
	void *raw = nullptr;
	int len = 0;
	const munge_err_t err = munge_decode(credential.c_str(), ctx.get(), &raw, &len, &d.uid, &d.gid);
	const std::unique_ptr<void, MemFree> payload(raw);	// allocated for some errors too
	if (payload && len > 0)
		d.payload.assign(static_cast<const char *>(payload.get()), static_cast<std::size_t>(len));
	d.status = status_of(err);
	if (err != EMUNGE_SUCCESS)
		d.error = error_of(ctx.get(), err);
	return d;
}

} // namespace gos::munge
