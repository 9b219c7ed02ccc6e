/**
 * Outgoing mail over nodemailer: SMTP when SMTP_URL is set, otherwise the `outbox`
 * transport, which writes each message as an .eml file into a maildir under the data
 * directory (`.flowplan/mail/new/`) so `npm start` shows notifications with no setup.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../../platform/config.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers?: Record<string, string>;
}

export interface SentMail {
  messageId: string;
  /** `smtp` or `outbox`: what deliveries record as the transport. */
  transport: 'smtp' | 'outbox';
}

export class Mailer {
  readonly transport: 'smtp' | 'outbox';
  readonly from: string;
  readonly maildir: string;
  private readonly smtp: Transporter | null;
  private readonly compose: Transporter;
  private readonly domain: string;
  private maildirReady: Promise<void> | null = null;

  constructor(
    config: Config,
    private readonly log: Logger,
  ) {
    this.from = config.mailFrom;
    this.domain = this.from.match(/@([^>\s]+)>?\s*$/)?.[1] ?? 'localhost';
    this.maildir = path.resolve(config.dataDir, 'mail');
    this.transport = config.smtpUrl ? 'smtp' : 'outbox';
    // Short timeouts: a hanging SMTP server fails this send (and it is retried) instead of
    // holding a worker for nodemailer's default ten minutes.
    this.smtp = config.smtpUrl
      ? nodemailer.createTransport(config.smtpUrl, {
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000,
        } as never)
      : null;
    this.compose = nodemailer.createTransport({
      streamTransport: true,
      buffer: true,
      newline: 'unix',
    });
  }

  /** A Message-ID of our own, so a delivery row can name the message before it is sent. */
  newMessageId(): string {
    return `<${Date.now().toString(36)}.${randomBytes(12).toString('hex')}@${this.domain}>`;
  }

  async send(message: MailMessage, messageId = this.newMessageId()): Promise<SentMail> {
    // Base64, not quoted-printable, for the text: QP breaks lines at 76 characters with a soft
    // break, which some clients and every copy-paste of the raw text leave inside a long link.
    const mail = {
      from: this.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      headers: message.headers,
      messageId,
      textEncoding: 'base64' as const,
    };
    if (this.smtp) {
      await this.smtp.sendMail(mail);
      return { messageId, transport: 'smtp' };
    }
    const composed = await this.compose.sendMail(mail);
    const file = await this.writeMaildir(composed.message as Buffer);
    this.log.info(
      { to: message.to, subject: message.subject, file },
      'mail written to the local maildir (no SMTP_URL)',
    );
    return { messageId, transport: 'outbox' };
  }

  /**
   * Maildir delivery: write under tmp/, then rename into new/ so readers never see half a file.
   * Mail holds invite and sign-in links: the folders are the server account's alone (0700, a
   * folder made 0755 by an older version too) and so is each file (0600).
   */
  private async writeMaildir(bytes: Buffer): Promise<string> {
    const name = `${Date.now()}.${process.pid}_${randomBytes(6).toString('hex')}.flowplan.eml`;
    this.maildirReady ??= (async () => {
      for (const dir of [
        this.maildir,
        ...['tmp', 'new', 'cur'].map((sub) => path.join(this.maildir, sub)),
      ]) {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await chmod(dir, 0o700);
      }
    })();
    await this.maildirReady.catch((error: unknown) => {
      this.maildirReady = null; // tried again on the next send
      throw error;
    });
    const tmp = path.join(this.maildir, 'tmp', name);
    const target = path.join(this.maildir, 'new', name);
    await writeFile(tmp, bytes, { mode: 0o600 });
    await rename(tmp, target);
    return target;
  }

  close(): void {
    this.smtp?.close();
  }
}
