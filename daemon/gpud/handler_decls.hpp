// Declares, inside a handler class, the handlers of the request table's rows
// (requests.def) of one group, named by defining GOS_HANDLERS_<GROUP> just
// before including this file; included once per class, so no guard.
#define GOS_HANDLER_DECLARE(name) Reply name(Session &s, const proto::Frame &f);
#define GOS_HANDLER_NONE(name)
#ifdef GOS_HANDLERS_SLURM
#define GOS_HANDLER_SLURM GOS_HANDLER_DECLARE
#else
#define GOS_HANDLER_SLURM GOS_HANDLER_NONE
#endif
#ifdef GOS_HANDLERS_AGENT
#define GOS_HANDLER_AGENT GOS_HANDLER_DECLARE
#else
#define GOS_HANDLER_AGENT GOS_HANDLER_NONE
#endif
#ifdef GOS_HANDLERS_ENGINE
#define GOS_HANDLER_ENGINE GOS_HANDLER_DECLARE
#else
#define GOS_HANDLER_ENGINE GOS_HANDLER_NONE
#endif
#ifdef GOS_HANDLERS_QUERY
#define GOS_HANDLER_QUERY GOS_HANDLER_DECLARE
#else
#define GOS_HANDLER_QUERY GOS_HANDLER_NONE
#endif
#define GOS_REQUEST(NAME, name, number, handler, ...) GOS_HANDLER_##handler(name)
#include <gpuoversub/requests.def>
#undef GOS_REQUEST
#undef GOS_HANDLER_SLURM
#undef GOS_HANDLER_AGENT
#undef GOS_HANDLER_ENGINE
#undef GOS_HANDLER_QUERY
#undef GOS_HANDLER_DECLARE
#undef GOS_HANDLER_NONE
#undef GOS_HANDLERS_SLURM
#undef GOS_HANDLERS_AGENT
#undef GOS_HANDLERS_ENGINE
#undef GOS_HANDLERS_QUERY
