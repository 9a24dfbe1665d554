import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readlinkSync, rmSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PeerConnection } from "../../../extension/channel/peer_connection.ts";

/** A real Unix socket pair through a listening socket: the accepted end and the client. */
async function acceptedPair(): Promise<{ accepted: Socket; client: Socket; done: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), "peer-conn-"));
  const path = join(dir, "s.sock");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const acceptedP = new Promise<Socket>((resolve) => server.once("connection", resolve));
  const client = connect(path);
  const accepted = await acceptedP;
  return {
    accepted,
    client,
    done: () => {
      accepted.destroy();
      client.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("a peer connection owns its pidfd and ends once", () => {
  it("the kernel's word on the peer at accept; end() closes the pidfd the first time only", async () => {
    const pair = await acceptedPair();
    try {
      const c = new PeerConnection(pair.accepted);
      assert.ok(c.creds.ok, "no SO_PEERCRED");
      assert.equal(c.peerPid, process.pid);
      assert.ok(c.inode !== undefined && c.inode > 0);
      // SO_PEERPIDFD: Linux 6.5 and later (this suite's machines).
      const pidfd = c.pidfd;
      assert.ok(pidfd !== undefined, "no pidfd for the peer");
      assert.match(readlinkSync(`/proc/self/fd/${pidfd}`), /pidfd/);
      assert.equal(c.ended, false);
      assert.equal(c.end(), true);
      assert.equal(c.ended, true);
      assert.equal(c.pidfd, undefined, "the pidfd outlived the end");
      let link = "";
      try {
        link = readlinkSync(`/proc/self/fd/${pidfd}`);
      } catch {
        // closed
      }
      assert.doesNotMatch(link, /pidfd/, "the pidfd was not closed");
      // Later ends are no-ops: nothing closes a descriptor number twice.
      assert.equal(c.end(), false);
      assert.equal(c.end(), false);
    } finally {
      pair.done();
    }
  });
});
