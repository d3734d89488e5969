#include "daemon/gpud/jobwide_listener.hpp"

#include <span>
#include <vector>

#include "common/util/log.hpp"

namespace gos::gpud {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// One connection: a frame in, a line out, then closed.
class JobwideListener::Door : public std::enable_shared_from_this<Door> {
public:
	// COUNTED: the door's limits count this connection until it goes.
	Door(JobwideListener &l, tcp::socket sock, std::string peer, bool counted)
		: l_(l), sock_(std::move(sock)), timer_(sock_.get_executor()), peer_(std::move(peer)), counted_(counted)
	{
	}
	~Door()
	{
		if (counted_)
			l_.limits_.disconnect(peer_);
	}

	void start()
	{
		timer_.expires_after(l_.settings_.frame_within);
		timer_.async_wait([self = shared_from_this()](const boost::system::error_code &ec) {
			if (!ec)
				self->sock_.close();	// the frame did not come whole in time
		});
		bytes_.resize(jobwide::frame_header_size);
		asio::async_read(sock_, asio::buffer(bytes_),
				 [self = shared_from_this()](const boost::system::error_code &ec, std::size_t) {
					 if (!ec)
						 self->header();
				 });
	}

	// Says ANSWER and closes; REASON is counted (and logged) when the
	// answer is not ok.
	void answer(const jobwide::Answer &a, const std::string &reason)
	{
		timer_.cancel();
		if (!reason.empty())
			l_.count(reason, peer_, frame_.node, frame_.job);
		std::string line;
		if (jobwide::encode_answer(a, line))
			line = "refused bad_answer\n";
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
		if (l_.limits_.frame(peer_, DoorLimits::Clock::now()) != DoorAdmit::ok)
			return busy("rate");
		Admission a = admit_frame(l_.writer_, l_.nodes_, frame_);
		if (a.is == Admission::Is::busy)
			return busy(a.reason);
		if (a.is == Admission::Is::refused)
			return refuse(a.reason);
		// Checks 3 and 4 block (a name's lookup, munged): a worker's.
		asio::post(l_.workers_, [self = shared_from_this(), addr = a.node_addr, alive = std::weak_ptr<bool>(l_.alive_)] {
			Opened o = open_frame(self->frame_, addr, self->peer_, self->l_.same_address_, self->l_.unseal_);
			asio::post(self->sock_.get_executor(), [self, o = std::move(o), alive] {
				if (alive.lock())
					self->opened(o);
			});
		});
	}

	void opened(const Opened &o)
	{
		if (o.refused == "replayed")
			return answer({jobwide::Answer::Word::dup, ""}, "");	// this node's credential, again
		if (o.refused == "not_its_address")
			l_.nodes_.mismatch();	// read the table again: the node may have moved
		if (!o.refused.empty())
			return refuse(o.refused);
		bool late = false;
		jobwide::Answer a = take_frame(l_.writer_, frame_, o.payload, late);
		if (a.word == jobwide::Answer::Word::refused)
			return refuse(a.reason);
		if (a.word == jobwide::Answer::Word::busy)
			return busy("unknown_run");
		if (a.word == jobwide::Answer::Word::ok) {
			l_.taken_++;
			if (late && l_.late_)
				l_.late_(frame_, o.payload);
		}
		answer(a, "");
	}

	JobwideListener &l_;
	tcp::socket sock_;
	asio::steady_timer timer_;
	std::string peer_;
	std::vector<std::uint8_t> bytes_;
	jobwide::Frame frame_;
	std::string out_;
	bool counted_;
};

JobwideListener::JobwideListener(asio::io_context &io, asio::thread_pool &workers, ListenerSettings settings,
				 JobwideWriter &writer, NodeTable &nodes, SameAddress same_address, Unseal unseal, Late late)
	: io_(io), workers_(workers), settings_(std::move(settings)), writer_(writer), nodes_(nodes),
	  same_address_(std::move(same_address)), unseal_(std::move(unseal)), late_(std::move(late)),
	  limits_(settings_.limits), acceptor_(io), alive_(std::make_shared<bool>(true))
{
	tcp::endpoint at = settings_.address.empty()
				   ? tcp::endpoint(tcp::v6(), settings_.port)
				   : tcp::endpoint(asio::ip::make_address(settings_.address), settings_.port);
	acceptor_.open(at.protocol());
	acceptor_.set_option(tcp::acceptor::reuse_address(true));
	if (settings_.address.empty())
		acceptor_.set_option(asio::ip::v6_only(false));	// IPv4 peers too, as ::ffff:a.b.c.d
	acceptor_.bind(at);
	acceptor_.listen();
	accept();
}

JobwideListener::~JobwideListener()
{
	*alive_ = false;
	alive_.reset();
}

std::uint16_t JobwideListener::port() const
{
	return acceptor_.local_endpoint().port();
}

void JobwideListener::accept()
{
	acceptor_.async_accept([this](const boost::system::error_code &ec, tcp::socket sock) {
		if (ec == asio::error::operation_aborted)
			return;
		if (!ec) {
			boost::system::error_code ep_ec;
			tcp::endpoint remote = sock.remote_endpoint(ep_ec);
			if (!ep_ec) {
				std::string peer = remote.address().to_string();
				DoorAdmit admit = limits_.connect(peer, DoorLimits::Clock::now());
				auto door = std::make_shared<Door>(*this, std::move(sock), peer, admit == DoorAdmit::ok);
				if (admit == DoorAdmit::ok)
					door->start();
				else
					door->busy(std::string(name_of(admit)));
			}
		} else
			GOS_LOG(log::warning, "job-wide door: accept: " << ec.message());
		accept();
	});
}

void JobwideListener::count(const std::string &reason, const std::string &peer, const std::string &node,
			    std::uint32_t job)
{
	refused_[reason]++;
	auto it = logged_.try_emplace(reason, std::chrono::minutes(1)).first;
	// Busy is the door at work (parts before the writer's epilog, a burst):
	// info; a refusal is someone's mistake or attack: notice.
	const log::Level level = reason.starts_with("busy_") ? log::info : log::notice;
	GOS_LOG_LIMITED(it->second, level,
			"job-wide door: " << reason << " from " << peer << (node.empty() ? "" : " claiming node " + node)
					  << (job ? " for job " + std::to_string(job) : std::string()));
}

} // namespace gos::gpud
