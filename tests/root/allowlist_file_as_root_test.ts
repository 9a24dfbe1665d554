/**
 * The allowlist file rules again, as root (tests/run.sh's root phase): the
 * cases only root can arrange (a directory owned by another user, a safe
 * root-owned chain) run here; the user suites cover the rest.
 */
import "../integration/broker/allowlist_file_test.ts";
