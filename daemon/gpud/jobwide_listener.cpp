#include "daemon/gpud/jobwide_listener.hpp"

#include <set>
#include <vector>

#include "common/util/log.hpp"

namespace gos::gpud {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// After a failed accept (out of descriptors): the next one waits this long,
// so that the loop does not spin on it.
constexpr auto accept_backoff = std::chrono::milliseconds(200);

} // namespace

// What the listener and its connections share. Every field is the event
// loop's; the workers see only the two checks, copied.
struct JobwideListener::State : std::enable_shared_from_this<State> {
	State(asio::io_context &io, asio::thread_pool &w, ListenerSettings s, JobwideWriter &wr, NodeTable &n,
	      SameAddress same, Unseal un, Seal se, Late l, DoorCounts &c)
		: workers(w), settings(std::move(s)), writer(wr), nodes(n), same_address(std::move(same)),
		  unseal(std::move(un)), seal(std::move(se)), late(std::move(l)), counts(c), limits(settings.limits),
		  acceptor(io), accept_timer(io)
	{
	}
	void accept();
	void count(const std::string &reason, const std::string &peer, const std::string &node, std::uint32_t job);

	asio::thread_pool &workers;
	ListenerSettings settings;
	JobwideWriter &writer;
	NodeTable &nodes;
	SameAddress same_address;
	Unseal unseal;
	Seal seal;
	Late late;
	DoorCounts &counts;
	DoorLimits limits;
	tcp::acceptor acceptor;
	asio::steady_timer accept_timer;
	RateLimit accept_log{std::chrono::minutes(1)}, seal_log{std::chrono::minutes(1)};
	std::map<std::string, RateLimit> logged;	// by reason: a fixed set
	std::set<Door *> open;	// to close when the listener goes
	bool closed = false;	// the listener is gone: results are dropped
};

// One connection: a frame in, a line out, then closed.
class JobwideListener::Door : public std::enable_shared_from_this<Door> {
public:
	// COUNTED: the door's limits count this connection until it goes.
	Door(std::shared_ptr<State> s, tcp::socket sock, std::string peer, bool counted)
		: s_(std::move(s)), sock_(std::move(sock)), timer_(sock_.get_executor()), peer_(std::move(peer)),
		  counted_(counted)
	{
		s_->open.insert(this);
	}
	~Door()
	{
		s_->open.erase(this);
		if (counted_)
			s_->limits.disconnect(peer_);
	}

	void start()
	{
		timer_.expires_after(s_->settings.frame_within);
		timer_.async_wait([self = shared_from_this()](const boost::system::error_code &ec) {
			if (!ec)
				self->close();	// the frame did not come whole in time
		});
		bytes_.resize(jobwide::frame_header_size);
		asio::async_read(sock_, asio::buffer(bytes_),
				 [self = shared_from_this()](const boost::system::error_code &ec, std::size_t) {
					 if (!ec)
						 self->header();
				 });
	}

	void close()
	{
		boost::system::error_code ignored;
		timer_.cancel();
		sock_.close(ignored);
	}

	// Says ANSWER and closes; REASON is counted (and logged) when given.
	void answer(const jobwide::Answer &a, const std::string &reason)
	{
		std::string line;
		if (jobwide::encode_answer(a, line))
			line = "refused bad_answer\n";
		say(std::move(line), reason);
	}

	// ANSWER to the part PAYLOAD, sealed by munged on a worker; unsealed
	// when munged cannot seal it, which its sender takes for busy and
	// tries again (then to hear dup).
	void answer_sealed(const jobwide::Answer &a, const std::string &reason, const jobwide::Payload &payload)
	{
		std::string text;
		if (jobwide::encode_answer_payload(a, {payload.job, payload.start, payload.node}, text) || !s_->seal)
			return answer(a, reason);
		// As in body(): the connection goes back to the event loop with
		// the result, so that its last reference is dropped there.
		asio::post(s_->workers, [self = shared_from_this(), text = std::move(text), seal = s_->seal, a, reason]() mutable {
			std::string credential, line;
			std::optional<std::string> why = seal(text, credential);
			if (!why)
				why = jobwide::encode_sealed_line(credential, line);
			auto exec = self->sock_.get_executor();
			asio::post(exec, [self = std::move(self), a, reason, line = std::move(line), why = std::move(why)]() mutable {
				if (self->s_->closed)
					return;
				if (!why)
					return self->say(std::move(line), reason);
				GOS_LOG_LIMITED(self->s_->seal_log, log::warning,
						"job-wide door: munged did not seal an answer: " << *why
						<< "; senders take it for busy and try again");
				self->answer(a, reason);
			});
		});
	}

	void say(std::string line, const std::string &reason)
	{
		timer_.cancel();
		if (!reason.empty())
			s_->count(reason, peer_, frame_.node, frame_.job);
		out_ = std::move(line);
		asio::async_write(sock_, asio::buffer(out_), [self = shared_from_this()](const boost::system::error_code &, std::size_t) {
			boost::system::error_code ignored;
			self->sock_.shutdown(tcp::socket::shutdown_both, ignored);
		});
	}

	void refuse(const std::string &reason) { answer({jobwide::Answer::Word::refused, reason}, reason); }
	void busy(const std::string &why) { answer({jobwide::Answer::Word::busy, ""}, "busy_" + why); }

private:
	void header()
	{
		std::size_t total = 0;
		if (auto why = jobwide::check_header(bytes_, total))
			return refuse(*why);
		bytes_.resize(total);
		asio::async_read(sock_, asio::buffer(bytes_.data() + jobwide::frame_header_size, total - jobwide::frame_header_size),
				 [self = shared_from_this()](const boost::system::error_code &ec, std::size_t) {
					 if (!ec)
						 self->body();
				 });
	}

	void body()
	{
		if (auto why = jobwide::decode_frame(bytes_, frame_))
			return refuse(*why);
		if (s_->limits.frame(peer_, DoorLimits::Clock::now()) != DoorAdmit::ok)
			return busy("rate");
		Admission a = admit_frame(s_->writer, s_->nodes, frame_);
		if (a.is == Admission::Is::busy)
			return busy(a.reason);
		if (a.is == Admission::Is::refused)
			return refuse(a.reason);
		// Checks 3 and 4 block (a name's lookup, munged): a worker's, with
		// copies of what it needs. The connection goes back to the event
		// loop with the result, so that its last reference is dropped there.
		asio::post(s_->workers, [self = shared_from_this(), frame = frame_, addr = a.node_addr, peer = peer_,
					 same = s_->same_address, unseal = s_->unseal]() mutable {
			Opened o = open_frame(frame, addr, peer, same, unseal);
			auto exec = self->sock_.get_executor();
			asio::post(exec, [self = std::move(self), o = std::move(o)] { self->opened(o); });
		});
	}

	void opened(const Opened &o)
	{
		if (s_->closed)
			return;
		if (o.refused == "not_its_address")
			s_->nodes.mismatch();	// read the table again: the node may have moved
		if (o.again)
			return busy(o.refused);
		if (!o.refused.empty())
			return refuse(o.refused);
		bool late = false;
		jobwide::Answer a = take_frame(s_->writer, frame_, o.payload, late);
		std::string reason;
		if (a.word == jobwide::Answer::Word::refused)
			reason = a.reason;
		else if (a.word == jobwide::Answer::Word::busy)
			reason = "busy_unknown_run";
		else if (a.word == jobwide::Answer::Word::ok) {
			s_->counts.taken++;
			if (late && s_->late)
				s_->late(frame_, o.payload);
		}
		answer_sealed(a, reason, o.payload);
	}

	std::shared_ptr<State> s_;
	tcp::socket sock_;
	asio::steady_timer timer_;
	std::string peer_;
	std::vector<std::uint8_t> bytes_;
	jobwide::Frame frame_;
	std::string out_;
	bool counted_;
};

JobwideListener::JobwideListener(asio::io_context &io, asio::thread_pool &workers, ListenerSettings settings,
				 JobwideWriter &writer, NodeTable &nodes, SameAddress same_address, Unseal unseal, Seal seal,
				 Late late, DoorCounts &counts)
	: state_(std::make_shared<State>(io, workers, std::move(settings), writer, nodes, std::move(same_address),
					 std::move(unseal), std::move(seal), std::move(late), counts))
{
	State &s = *state_;
	tcp::endpoint at = s.settings.address.empty()
				   ? tcp::endpoint(tcp::v6(), s.settings.port)
				   : tcp::endpoint(asio::ip::make_address(s.settings.address), s.settings.port);
	s.acceptor.open(at.protocol());
	s.acceptor.set_option(tcp::acceptor::reuse_address(true));
	if (s.settings.address.empty())
		s.acceptor.set_option(asio::ip::v6_only(false));	// IPv4 peers too, as ::ffff:a.b.c.d
	s.acceptor.bind(at);
	s.acceptor.listen();
	s.accept();
}

JobwideListener::~JobwideListener()
{
	State &s = *state_;
	s.closed = true;
	boost::system::error_code ignored;
	s.acceptor.close(ignored);
	s.accept_timer.cancel();
	for (Door *d : std::set<Door *>(s.open))
		d->close();
}

std::uint16_t JobwideListener::port() const
{
	return state_->acceptor.local_endpoint().port();
}

const std::map<std::string, std::uint64_t> &JobwideListener::refused() const
{
	return state_->counts.refused;
}

std::uint64_t JobwideListener::taken() const
{
	return state_->counts.taken;
}

void JobwideListener::State::accept()
{
	// The handlers hold the state: a listener gone leaves it to them until
	// they have run.
	acceptor.async_accept([self = shared_from_this()](const boost::system::error_code &ec, tcp::socket sock) {
		if (ec == asio::error::operation_aborted || self->closed)
			return;
		if (ec) {
			GOS_LOG_LIMITED(self->accept_log, log::warning, "job-wide door: accept: " << ec.message());
			self->accept_timer.expires_after(accept_backoff);
			self->accept_timer.async_wait([self](const boost::system::error_code &e) {
				if (!e && !self->closed)
					self->accept();
			});
			return;
		}
		boost::system::error_code ep_ec;
		tcp::endpoint remote = sock.remote_endpoint(ep_ec);
		if (!ep_ec) {
			// An IPv4 peer on the dual-stack socket is counted and
			// logged as its IPv4 address, as on a socket of its own.
			asio::ip::address from = remote.address();
			if (from.is_v6() && from.to_v6().is_v4_mapped())
				from = asio::ip::make_address_v4(asio::ip::v4_mapped, from.to_v6());
			std::string peer = from.to_string();
			if (self->settings.reserved_only && remote.port() >= 1024) {
				// Not root's: closed unread and unanswered, the least a
				// flood can cost; no limit spent. Its sender, if ours,
				// says why it could not bind a reserved port.
				self->count("unreserved_port", peer, "", 0);
				sock.close(ep_ec);
				return self->accept();
			}
			DoorAdmit admit = self->limits.connect(peer, DoorLimits::Clock::now());
			auto door = std::make_shared<Door>(self, std::move(sock), peer, admit == DoorAdmit::ok);
			if (admit == DoorAdmit::ok)
				door->start();
			else
				door->busy(std::string(name_of(admit)));
		}
		self->accept();
	});
}

void JobwideListener::State::count(const std::string &reason, const std::string &peer, const std::string &node,
				   std::uint32_t job)
{
	counts.refused[reason]++;
	if (job && !reason.starts_with("busy_"))
		writer.refused(job, {node, peer, reason});
	auto it = logged.try_emplace(reason, std::chrono::minutes(1)).first;
	// Busy is the door at work (parts before the writer's epilog, a burst):
	// info; a refusal is someone's mistake or attack: notice.
	const log::Level level = reason.starts_with("busy_") ? log::info : log::notice;
	GOS_LOG_LIMITED(it->second, level,
			"job-wide door: " << reason << " from " << peer << (node.empty() ? "" : " claiming node " + node)
					  << (job ? " for job " + std::to_string(job) : std::string()));
}

} // namespace gos::gpud
