// The image catalogue through the console: a platform admin uploads an
// archive (`talon image pack` of a small tree) and sees its progress,
// prewarms it and sees each worker's progress, and deletes it; a
// developer sees the catalogue but no control. Needs TALON_BIN (the talon
// binary, for `talon image pack`) besides TALON_URL and TALON_ADMIN_KEY.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addUser, consoleUrl, launch, makePlatformAdmin, makeTenant, newSession, removeUser, rest, adminKey, signIn, skip, unique } from "./lib.mjs";

const imageSkip = skip || (process.env.TALON_BIN ? false : "needs TALON_BIN (the talon binary) for `talon image pack`");

let browser;
before(async () => {
  if (!imageSkip) browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** A one-layer OCI archive of a small tree with 4 MiB of noise (so the upload takes a moment). */
function packArchive() {
  const dir = mkdtempSync(join(tmpdir(), "talon-console-e2e-image-"));
  mkdirSync(join(dir, "rootfs", "etc"), { recursive: true });
  writeFileSync(join(dir, "rootfs", "etc", "hello.txt"), "hello from an imported image\n");
  writeFileSync(join(dir, "rootfs", "noise.bin"), randomBytes(4 << 20));
  const out = join(dir, "image.tar");
  const r = spawnSync(process.env.TALON_BIN, ["image", "pack", "--rootfs", join(dir, "rootfs"), "--output", out], { encoding: "utf8" });
  assert.equal(r.status, 0, `talon image pack: ${r.stderr}`);
  assert.ok(statSync(out).size > 4 << 20);
  return { dir, out };
}

test("images: an admin uploads with progress, prewarms with each worker's progress, deletes; a developer only looks", { skip: imageSkip }, async () => {
  const admin = await makePlatformAdmin("images");
  const { dir, out } = packArchive();
  const name = unique("img").toLowerCase().replace(/[^a-z0-9-]/g, "-").slice(0, 60);
  const s = await newSession(browser);
  try {
    await signIn(s.page, admin);
    await s.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Images" }).click();
    await s.page.getByRole("table", { name: "The catalogue" }).getByRole("cell", { name: "host", exact: true }).waitFor();
    // Whether a progress bar showed while it ran.
    await s.page.evaluate(() => {
      window.__progress = [];
      new MutationObserver(() => {
        const p = document.querySelector('[role="status"] progress');
        if (p) window.__progress.push(p.getAttribute("aria-label"));
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await s.page.getByLabel("Name", { exact: true }).fill(name);
    await s.page.getByLabel("Archive", { exact: true }).setInputFiles(out);
    await s.page.getByRole("button", { name: "Import", exact: true }).click();
    await s.page.getByRole("table", { name: "The catalogue" }).getByRole("cell", { name, exact: true }).waitFor({ timeout: 60_000 });
    const seen = await s.page.evaluate(() => window.__progress);
    assert.ok(seen.length > 0, "no progress was shown");
    const got = await rest("GET", `/v1/images/${encodeURIComponent(name)}`, adminKey);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.equal(got.body.image.source, "IMAGE_SOURCE_OCI_ARCHIVE");

    // Prewarm: unpacked on every worker (no pool, so nothing keeps running).
    await s.page.getByRole("button", { name: `Prewarm ${name}` }).click();
    await s.page.getByLabel("Pool size per worker").fill("0");
    await s.page.getByRole("region", { name: `Prewarm ${name}` }).getByRole("button", { name: "Prewarm", exact: true }).click();
    await s.page.getByText("Done: every worker has answered.").waitFor({ timeout: 60_000 });
    const workers = s.page.getByRole("list", { name: "Progress by worker" }).getByRole("listitem");
    assert.ok((await workers.count()) >= 1);
    assert.match(await workers.first().innerText(), /wrk_/);

    // Delete, through the confirmation.
    await s.page.getByRole("button", { name: `Delete ${name}` }).click();
    await s.page.getByRole("dialog", { name: `Delete image ${name}?` }).getByRole("button", { name: "Delete" }).click();
    await s.page.getByRole("table", { name: "The catalogue" }).getByRole("cell", { name, exact: true }).waitFor({ state: "detached" });
    assert.equal((await rest("GET", `/v1/images/${encodeURIComponent(name)}`, adminKey)).status, 404);
    assert.deepEqual(s.problems.errors, []);

    // A developer: the catalogue, no control.
    const t = await makeTenant("images-dev");
    const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
    const d = await newSession(browser);
    try {
      await signIn(d.page, dev);
      await d.page.goto(`${consoleUrl}/images`);
      await d.page.getByRole("table", { name: "The catalogue" }).getByRole("cell", { name: "host", exact: true }).waitFor();
      assert.equal(await d.page.getByRole("heading", { name: "Import an image" }).count(), 0);
      assert.equal(await d.page.getByRole("button", { name: /^(Prewarm|Delete) / }).count(), 0);
    } finally {
      await d.context.close();
    }
  } finally {
    await s.context.close();
    await removeUser(admin);
    rmSync(dir, { recursive: true, force: true });
  }
});
