/** The player page's DOM: the stage, the pairing panel, the notice line and the identify banner. */
export class PlayerView {
  readonly root: HTMLElement;
  readonly stage: HTMLElement;
  readonly pairing: HTMLElement;
  readonly code: HTMLElement;
  readonly pairingStatus: HTMLElement;
  readonly pairingReason: HTMLElement;
  private readonly noticeEl: HTMLElement;
  private readonly identifyEl: HTMLElement;
  private identifyTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(doc: Document, host: string) {
    const root = doc.getElementById('player') ?? doc.body.appendChild(Object.assign(doc.createElement('div'), { id: 'player' }));
    root.classList.add('pl-root');
    root.innerHTML = `
  <div class="pl-stage" data-testid="stage"></div>
  <section class="pl-pairing" hidden data-testid="pairing">
    <p class="pl-pairing-lead">Add this screen in Placard with the code</p>
    <p class="pl-pairing-code" data-testid="pairing-code" aria-live="polite"></p>
    <p class="pl-pairing-help">Console &rarr; Screens &rarr; Add screen &middot; <span class="pl-pairing-host"></span></p>
    <p class="pl-pairing-status" data-testid="pairing-status"></p>
    <p class="pl-pairing-reason" data-testid="pairing-reason" hidden></p>
  </section>
  <div class="pl-notice" hidden data-testid="notice"></div>
  <div class="pl-identify" hidden data-testid="identify"></div>`;
    const el = (selector: string) => root.querySelector<HTMLElement>(selector)!;
    this.root = root;
    this.stage = el('.pl-stage');
    this.pairing = el('.pl-pairing');
    this.code = el('.pl-pairing-code');
    this.pairingStatus = el('.pl-pairing-status');
    this.pairingReason = el('.pl-pairing-reason');
    this.noticeEl = el('.pl-notice');
    this.identifyEl = el('.pl-identify');
    el('.pl-pairing-host').textContent = host;
  }

  setState(state: string): void {
    this.root.dataset.state = state;
  }

  notice(text: string | null): void {
    this.noticeEl.hidden = !text;
    this.noticeEl.textContent = text ?? '';
  }

  get noticeText(): string {
    return this.noticeEl.textContent ?? '';
  }

  /** The identify banner for `seconds` (the screen's name and the server it follows). */
  identify(text: string, seconds: number): void {
    this.identifyEl.hidden = false;
    this.identifyEl.textContent = text;
    if (this.identifyTimer) clearTimeout(this.identifyTimer);
    this.identifyTimer = setTimeout(() => this.hideIdentify(), seconds * 1000);
  }

  hideIdentify(): void {
    this.identifyEl.hidden = true;
  }
}
