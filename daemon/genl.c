// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink over libmnl for oooprobed: see genl.h.
 */
#include <errno.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "genl.h"

int genl_request(struct mnl_socket *nl, unsigned int *seq, uint16_t type,
		 uint8_t cmd, uint8_t version, uint16_t str_attr,
		 const char *str, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct genlmsghdr *gh;
	unsigned int s = ++*seq;
	int n, ret;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = s;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = version;
	if (str)
		mnl_attr_put_strz(nlh, str_attr, str);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, n, s, mnl_socket_get_portid(nl), cb,
				 data);
		if (ret < 0)
			return -errno;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

struct resolve {
	uint16_t id;
	uint32_t group;
	const char *want_group;
};

static void group_attr(const struct nlattr *attr, struct resolve *r)
{
	struct nlattr *a;
	const char *name = NULL;
	uint32_t id = 0;

	mnl_attr_for_each_nested(a, attr) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_NAME &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			name = mnl_attr_get_str(a);
		else if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_ID &&
			 mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			id = mnl_attr_get_u32(a);
	}
	if (name && !strcmp(name, r->want_group))
		r->group = id;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct resolve *r = data;
	struct nlattr *a, *grp;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
				r->id = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			mnl_attr_for_each_nested(grp, a)
				group_attr(grp, r);
			break;
		}
	}
	return MNL_CB_OK;
}

int genl_resolve(struct mnl_socket *nl, unsigned int *seq, const char *name,
		 const char *group, uint16_t *id, uint32_t *group_id)
{
	struct resolve r = { .want_group = group };
	int err;

	err = genl_request(nl, seq, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1,
			   CTRL_ATTR_FAMILY_NAME, name, family_cb, &r);
	if (err)
		return err;
	if (!r.id)
		return -ENOENT;
	*id = r.id;
	*group_id = r.group;
	return 0;
}
