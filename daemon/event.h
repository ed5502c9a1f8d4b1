/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One tcp_oooprobe event (SEGMENT or FLOW message) parsed and checked: no
 * netlink socket here, so the host unit tests can feed it messages.
 */
#ifndef OOOPROBED_EVENT_H
#define OOOPROBED_EVENT_H

#include <stdint.h>
#include <arpa/inet.h>
#include <linux/netlink.h>

#include "tcp_oooprobe.h"

struct event {
	uint64_t v[TCP_OOOPROBE_A_MAX + 1];	/* integer attributes */
	int has[TCP_OOOPROBE_A_MAX + 1];
	char laddr[INET6_ADDRSTRLEN], raddr[INET6_ADDRSTRLEN];
};

/*
 * Parse the attributes of NLH (a generic netlink message of the family).
 * Attributes this version does not know are skipped. Returns 0, or
 * -EINVAL when the message is malformed: too short for its headers, an
 * address that is not 4 or 16 bytes or not the size of the event's
 * FAMILY, or an integer attribute of the wrong size. (An attribute that
 * overruns the message ends the parsing, as everywhere in libmnl.) The caller must not
 * use a malformed event.
 */
int event_parse(const struct nlmsghdr *nlh, struct event *e);

#endif
