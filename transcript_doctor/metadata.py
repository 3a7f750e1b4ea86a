"""Carrying a file's owner, group, mode, ACLs and extended attributes over to its repair.

An in-place repair is a new inode: whatever is not copied is lost.  Run as root, the
new file would be root's; POSIX ACLs live in an extended attribute and the group bits
of the mode are only the ACL's mask, so copying the mode alone gives the owning group
the mask's rights (r became rw).  Everything is copied through descriptors and checked
afterwards; what cannot be kept refuses the replace instead of being dropped silently.
"""

from __future__ import annotations

import errno
import os
import stat

_UNSUPPORTED = (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS)


class NotKept(Exception):
    """A piece of the original's metadata cannot be given to the repair; the message says which."""


def copy(source_fd: int, source: os.stat_result, target_fd: int, name: str) -> None:
    """Give the file of ``target_fd`` the owner, mode and extended attributes of ``source``."""
    current = os.fstat(target_fd)
    if (current.st_uid, current.st_gid) != (source.st_uid, source.st_gid):
        try:
            os.fchown(target_fd, source.st_uid, source.st_gid)
        except OSError as exc:
            raise NotKept(
                f"{name} belongs to {source.st_uid}:{source.st_gid} and a new file cannot be given "
                f"that owner here ({exc.strerror}); replacing it would change its owner"
            ) from None
    os.fchmod(target_fd, stat.S_IMODE(source.st_mode))  # after chown, which clears set-id bits
    _copy_xattrs(source_fd, target_fd, name)
    after = os.fstat(target_fd)
    if (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) != (
        source.st_uid,
        source.st_gid,
        stat.S_IMODE(source.st_mode),
    ):
        raise NotKept(f"{name}: owner or mode could not be carried over to the repaired file")


def _names(fd: int) -> list[str]:
    if not hasattr(os, "listxattr"):
        return []
    try:
        return os.listxattr(fd)
    except OSError as exc:
        if exc.errno in _UNSUPPORTED:
            return []
        raise


def _copy_xattrs(source_fd: int, target_fd: int, name: str) -> None:
    """Extended attributes, POSIX ACLs (``system.posix_acl_access``) among them, made equal.

    An attribute the new file already has with the same value (an SELinux label the
    folder gives every new file) is left alone; one it has that the original lacks (an
    ACL inherited from the folder's default ACL) is removed."""
    wanted = _names(source_fd)
    for key in wanted:
        try:
            value = os.getxattr(source_fd, key)
        except OSError as exc:
            if exc.errno == errno.ENODATA:
                continue
            raise NotKept(f"{name}: cannot read its attribute {key} ({exc.strerror})") from None
        try:
            if os.getxattr(target_fd, key) == value:
                continue
        except OSError:
            pass
        try:
            os.setxattr(target_fd, key, value)
        except OSError as exc:
            raise NotKept(
                f"{name}: its attribute {key} cannot be carried over to the repaired file ({exc.strerror})"
            ) from None
    for key in _names(target_fd):
        if key not in wanted:
            try:
                os.removexattr(target_fd, key)
            except OSError as exc:
                raise NotKept(
                    f"{name}: the repaired file would gain attribute {key} ({exc.strerror})"
                ) from None
