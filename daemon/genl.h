/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generic netlink over libmnl for oooprobed: one request helper (send a
 * command, parse the replies until the kernel's ACK) and the family/group
 * resolution through nlctrl built on it.
 */
#ifndef OOOPROBED_GENL_H
#define OOOPROBED_GENL_H

#include <stdint.h>
#include <libmnl/libmnl.h>

/*
 * Send generic netlink command CMD (version VERSION) to family TYPE on NL
 * with NLM_F_ACK, a string attribute STR_ATTR = STR when STR is not NULL,
 * and run CB(reply, DATA) on every reply until the ACK. *SEQ is the
 * socket's sequence counter. Returns 0 or -errno (the kernel's error from
 * the ACK, e.g. -EPERM or -ENOENT, or the socket's).
 */
int genl_request(struct mnl_socket *nl, unsigned int *seq, uint16_t type,
		 uint8_t cmd, uint8_t version, uint16_t str_attr,
		 const char *str, mnl_cb_t cb, void *data);

/*
 * Resolve family NAME and its multicast group GROUP through nlctrl: *ID
 * and *GROUP_ID (0 when the family has no such group). Returns 0, -ENOENT
 * when the family does not exist, or another -errno.
 */
int genl_resolve(struct mnl_socket *nl, unsigned int *seq, const char *name,
		 const char *group, uint16_t *id, uint32_t *group_id);

#endif
