# sshd.sh - a real sshd of our own on a free loopback port, with host and
# user keys made for the test (keys only: no password, no PAM), for the
# tests of manager pull over ssh.
# shellcheck shell=bash
#
# Source tests/lib/common.sh first. sshd_start: skips the test (77) when
# sshd cannot run here; sets S (its directory: keys, config, known_hosts,
# sshd.log), PORT, ME (the user to log in as) and RSH (the ssh command
# with our key and known_hosts, for manager pull -e). SSHD_EXTRA, if set,
# goes into sshd_config as it is (e.g. "AcceptEnv TMPDIR"). Stopped
# automatically when the script exits.
sshd_start() {
  local sshd
  sshd=$(command -v sshd || echo /usr/sbin/sshd)
  [ -x "$sshd" ] || skip "sshd is not installed (Debian package openssh-server)"
  need_cmd ssh
  need_cmd ssh-keygen
  S=$WORK/ssh
  mkdir -m 700 "$S"
  ssh-keygen -q -t ed25519 -N '' -f "$S/host_key"
  ssh-keygen -q -t ed25519 -N '' -f "$S/user_key"
  cp "$S/user_key.pub" "$S/authorized_keys"
  PORT=$(free_port)
  cat > "$S/sshd_config" <<CONF
Port $PORT
ListenAddress 127.0.0.1
HostKey $S/host_key
AuthorizedKeysFile $S/authorized_keys
PidFile $S/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowTcpForwarding no
X11Forwarding no
PrintMotd no
LogLevel VERBOSE
${SSHD_EXTRA:-}
CONF
  [ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd   # privilege separation dir
  "$sshd" -t -f "$S/sshd_config" 2>"$S/sshd-t.log" || skip "sshd cannot run here: $(cat "$S/sshd-t.log")"
  "$sshd" -D -f "$S/sshd_config" -E "$S/sshd.log" &
  SSHD_PID=$!
  at_exit "kill $SSHD_PID 2>/dev/null; wait $SSHD_PID 2>/dev/null"
  wait_port "$PORT"
  echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$S/host_key.pub")" > "$S/known_hosts"
  RSH="ssh -F /dev/null -i $S/user_key -o IdentitiesOnly=yes -o UserKnownHostsFile=$S/known_hosts -o StrictHostKeyChecking=yes"
  ME=$(id -un)
  $RSH -o BatchMode=yes -p "$PORT" "$ME@127.0.0.1" true 2>"$WORK/ssh-probe.err" ||
    fail "cannot log in to our own sshd: $(cat "$WORK/ssh-probe.err"; tail -5 "$S/sshd.log")"
  ok "sshd on 127.0.0.1:$PORT accepts our key"
}
