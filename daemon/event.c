// SPDX-License-Identifier: GPL-2.0
/* Parsing and checking one tcp_oooprobe event; see event.h. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "event.h"

struct parse {
	struct event *e;
	const void *addr[2];		/* local, remote payloads */
	int alen[2];
	int bad;
};

/* Payload size of each integer attribute, from the uapi header. */
static int int_size(int t)
{
	switch (t) {
	case TCP_OOOPROBE_A_EVENT_SEQ:
	case TCP_OOOPROBE_A_NETNS_COOKIE:
	case TCP_OOOPROBE_A_TIME_IN:
	case TCP_OOOPROBE_A_TIME_OUT:
	case TCP_OOOPROBE_A_BYTES_RECEIVED:
	case TCP_OOOPROBE_A_LIFETIME_NS:
		return 8;
	case TCP_OOOPROBE_A_SEQ:
	case TCP_OOOPROBE_A_LEN:
	case TCP_OOOPROBE_A_DATA_SEGS_IN:
	case TCP_OOOPROBE_A_OOO_SEGS:
	case TCP_OOOPROBE_A_FLOW_FLAGS:
		return 4;
	case TCP_OOOPROBE_A_LOCAL_PORT:
	case TCP_OOOPROBE_A_REMOTE_PORT:
		return 2;
	case TCP_OOOPROBE_A_FAMILY:
		return 1;
	default:
		return 0;	/* not part of an event: ignored */
	}
}

static int attr_cb(const struct nlattr *a, void *data)
{
	struct parse *p = data;
	struct event *e = p->e;
	int t = mnl_attr_get_type(a), len = mnl_attr_get_payload_len(a);
	int want;

	if (t <= 0 || t > TCP_OOOPROBE_A_MAX)
		return MNL_CB_OK;	/* newer module: ignore */
	if (t == TCP_OOOPROBE_A_LOCAL_ADDR || t == TCP_OOOPROBE_A_REMOTE_ADDR) {
		int i = t == TCP_OOOPROBE_A_REMOTE_ADDR;

		if (len != 4 && len != 16)
			p->bad = 1;
		p->addr[i] = mnl_attr_get_payload(a);
		p->alen[i] = len;
		e->has[t] = 1;
		return MNL_CB_OK;
	}
	want = int_size(t);
	if (!want)
		return MNL_CB_OK;
	if (len != want) {
		p->bad = 1;
		return MNL_CB_OK;
	}
	e->has[t] = 1;
	switch (want) {
	case 8:
		e->v[t] = mnl_attr_get_u64(a);
		break;
	case 4:
		e->v[t] = mnl_attr_get_u32(a);
		break;
	case 2:
		e->v[t] = mnl_attr_get_u16(a);
		break;
	default:
		e->v[t] = mnl_attr_get_u8(a);
	}
	return MNL_CB_OK;
}

int event_parse(const struct nlmsghdr *nlh, struct event *e)
{
	struct parse p = { .e = e };
	char *out[2] = { e->laddr, e->raddr };
	int i, family = 0;

	memset(e, 0, sizeof(*e));
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(struct genlmsghdr))
		return -EINVAL;
	if (mnl_attr_parse(nlh, sizeof(struct genlmsghdr), attr_cb, &p) !=
	    MNL_CB_OK || p.bad)
		return -EINVAL;
	if (e->has[TCP_OOOPROBE_A_FAMILY])
		family = (int)e->v[TCP_OOOPROBE_A_FAMILY];
	for (i = 0; i < 2; i++) {
		int af;

		if (!p.addr[i])
			continue;
		af = p.alen[i] == 16 ? AF_INET6 : AF_INET;
		if (family && family != af)
			return -EINVAL;
		if (!inet_ntop(af, p.addr[i], out[i], INET6_ADDRSTRLEN))
			return -EINVAL;
	}
	return 0;
}
