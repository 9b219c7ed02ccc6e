/** The mailer against a real SMTP server on loopback, and the maildir fallback with no SMTP_URL. */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import t from 'tap';
import { loadConfig } from '../../../src/platform/config.ts';
import { Mailer } from '../../../src/services/mail/mailer.ts';
import { startSmtp } from '../../helpers/smtp.ts';
import { plainTextAsSent, textLinks } from '../../helpers/mail-checks.ts';

const log = pino({ level: 'silent' });

t.test('SMTP: text and HTML alternatives, From, Message-ID and extra headers arrive', async (t) => {
  const smtp = await startSmtp(t);
  const mailer = new Mailer(
    loadConfig({ SMTP_URL: smtp.url, BASE_URL: 'https://plan.example.com' }),
    log,
  );
  t.teardown(() => mailer.close());
  const sent = await mailer.send({
    to: 'ada@example.com',
    subject: 'Hello <there>',
    text: 'plain body',
    html: '<p>html body</p>',
    headers: { 'List-Unsubscribe': '<https://plan.example.com/u/x>' },
  });
  t.equal(sent.transport, 'smtp');
  const [mail] = await smtp.waitFor((m) => m.to.includes('ada@example.com'));
  t.equal(mail!.parsed.subject, 'Hello <there>');
  t.equal(mail!.parsed.text?.trim(), 'plain body');
  t.equal(mail!.parsed.html, '<p>html body</p>');
  t.equal(mail!.parsed.from?.value[0]?.address, 'notifications@plan.example.com');
  t.equal(mail!.parsed.messageId, sent.messageId);
  t.match(sent.messageId, /^<[^@>]+@plan\.example\.com>$/);
  t.equal(mail!.header('list-unsubscribe'), '<https://plan.example.com/u/x>');
});

t.test(
  'a link longer than a quoted-printable line stays whole on its line in the raw text part',
  async (t) => {
    const smtp = await startSmtp(t);
    const mailer = new Mailer(loadConfig({ SMTP_URL: smtp.url }), log);
    t.teardown(() => mailer.close());
    const url = `https://plan.example.com/app/invite?token=inv_${'x'.repeat(120)}&next=%2Fapp`;
    // Non-ASCII text and a long line: what made nodemailer pick quoted-printable.
    await mailer.send({
      to: 'long@example.com',
      subject: 'Links',
      text: `Open this … now:\n${url}\nor this: ${url}\n`,
      html: `<p><a href="${url}">Open</a></p>`,
    });
    const [mail] = await smtp.waitFor((m) => m.to.includes('long@example.com'));
    const wire = plainTextAsSent(mail!);
    t.ok(wire.split('\n').includes(url), 'the link is a whole line of the text part as sent');
    t.same(textLinks(wire), [url, url], 'no line break falls inside either link');
    t.same(textLinks(mail!.parsed.text!), [url, url], 'and the parsed text has them exactly');
  },
);

t.test('SMTP refusal and a dropped connection reject the send', async (t) => {
  const smtp = await startSmtp(t);
  const mailer = new Mailer(loadConfig({ SMTP_URL: smtp.url }), log);
  t.teardown(() => mailer.close());
  const message = { to: 'a@example.com', subject: 's', text: 't', html: '<p>t</p>' };
  smtp.mode = 'reject';
  await t.rejects(mailer.send(message));
  smtp.mode = 'disconnect';
  await t.rejects(mailer.send(message));
  t.equal(smtp.messages.length, 0);
  smtp.mode = 'accept';
  await mailer.send(message);
  t.equal(smtp.messages.length, 1, 'the server still works for the next send');
});

t.test('no SMTP_URL: the message lands in the maildir under the data directory', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flowplan-mail-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const mailer = new Mailer(
    loadConfig({ FLOWPLAN_DATA_DIR: dataDir, MAIL_FROM: 'Plans <plans@example.org>' }),
    log,
  );
  const sent = await mailer.send({
    to: 'b@example.com',
    subject: 'Maildir',
    text: 'hi',
    html: '<b>hi</b>',
  });
  t.equal(sent.transport, 'outbox');
  const files = await readdir(path.join(dataDir, 'mail', 'new'));
  t.equal(files.length, 1);
  const raw = await readFile(path.join(dataDir, 'mail', 'new', files[0]!), 'utf8');
  t.match(raw, /^From: Plans <plans@example\.org>$/m);
  t.match(raw, /^Subject: Maildir$/m);
  t.match(raw, new RegExp(`^Message-ID: ${sent.messageId.replace(/[.]/g, '\\.')}$`, 'mi'));
  t.match(raw, /multipart\/alternative/);
  t.same(await readdir(path.join(dataDir, 'mail', 'tmp')), [], 'nothing left half-written');
});

t.test(
  "no SMTP_URL: the mail files and their folders are the server account's alone",
  async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flowplan-mail-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    // A maildir an older version made 0755 is closed too.
    await mkdir(path.join(dataDir, 'mail', 'new'), { recursive: true, mode: 0o755 });
    await chmod(path.join(dataDir, 'mail'), 0o755);
    const mailer = new Mailer(loadConfig({ FLOWPLAN_DATA_DIR: dataDir }), log);
    const message = {
      to: 'c@example.com',
      subject: 'Your invitation',
      text: 'https://plan.example.com/app/invite?token=inv_x',
      html: '<p>x</p>',
    };
    await mailer.send(message);
    await mailer.send(message);
    const mode = async (file: string) => ((await stat(file)).mode & 0o777).toString(8);
    for (const dir of ['', 'tmp', 'new', 'cur'])
      t.equal(await mode(path.join(dataDir, 'mail', dir)), '700', `mail/${dir}: 0700`);
    const files = await readdir(path.join(dataDir, 'mail', 'new'));
    t.equal(files.length, 2);
    for (const file of files)
      t.equal(await mode(path.join(dataDir, 'mail', 'new', file)), '600', `${file}: 0600`);
  },
);
