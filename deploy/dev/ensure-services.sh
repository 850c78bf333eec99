#!/usr/bin/env bash
# Makes sure the Postgres and Redis that `make test` uses answer on this
# machine: starts them when they are installed but stopped, and installs them
# with apt-get (as root, Debian) when they are missing. With TEST_DATABASE_URL
# / DATABASE_URL or REDIS_URL set, that server is the caller's business. The
# tests themselves fail loudly when a dependency still does not answer.
set -u

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; }

install() {
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "ensure-services: installing $*" >&2
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
	else
		echo "ensure-services: $* missing; install it (or set the URL variables)" >&2
	fi
}

if [ -z "${TEST_DATABASE_URL:-}${DATABASE_URL:-}" ] && ! pg_up; then
	command -v pg_ctlcluster >/dev/null || install postgresql
	for v in $(ls /etc/postgresql 2>/dev/null); do
		pg_ctlcluster --skip-systemctl-redirect "$v" main start 2>/dev/null || true
	done
	pg_up || echo "ensure-services: Postgres does not answer on 127.0.0.1:5432" >&2
fi

# The end-to-end tests run whole platforms side by side (seven services,
# each with its pool): Debian's default of 100 connections is too few. A
# local cluster we manage is raised to 300 once (a restart).
if [ -z "${TEST_DATABASE_URL:-}${DATABASE_URL:-}" ] && pg_up && [ "$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null; then
	max=$(su postgres -c "psql -Atqc 'show max_connections'" 2>/dev/null || psql -h 127.0.0.1 -U postgres -Atqc 'show max_connections' 2>/dev/null || echo 0)
	if [ "${max:-0}" -gt 0 ] && [ "$max" -lt 300 ]; then
		echo "ensure-services: raising Postgres max_connections from $max to 300 (restart)" >&2
		psql -h 127.0.0.1 -U postgres -qc 'ALTER SYSTEM SET max_connections = 300' >/dev/null 2>&1 ||
			su postgres -c "psql -qc 'ALTER SYSTEM SET max_connections = 300'" >/dev/null 2>&1
		for v in $(ls /etc/postgresql 2>/dev/null); do
			pg_ctlcluster --skip-systemctl-redirect "$v" main restart 2>/dev/null || true
		done
		for _ in $(seq 1 50); do pg_up && break; sleep 0.2; done
		pg_up || echo "ensure-services: Postgres does not answer after the restart" >&2
	fi
fi

if [ -z "${REDIS_URL:-}" ] && ! redis_up; then
	command -v redis-server >/dev/null || install redis-server
	redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null 2>&1 || true
	for _ in 1 2 3 4 5; do redis_up && break; sleep 0.2; done
	redis_up || echo "ensure-services: Redis does not answer on 127.0.0.1:6379" >&2
fi
exit 0
