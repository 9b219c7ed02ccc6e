/**
 * Built-in catalogue of project templates.
 *
 * Each template is a small, realistic dependency graph. `after` lists indexes of
 * EARLIER tasks in the same array, so every template is acyclic by construction.
 * Template ids are stable forever: never rename one, add a new template instead.
 * All data is deeply frozen at module load.
 */

export interface TemplateTask {
  name: string;
  description?: string;
  estimateHours: number;
  /** The least and the most hours such a task takes (a flow started from the template keeps it). */
  estimateRange: { low: number; high: number };
  /** Indexes of earlier tasks in this array that must finish first. */
  after: number[];
}

export interface TemplateDef {
  /** 'tpl_' + kebab slug, stable forever. */
  id: string;
  name: string;
  description: string;
  category: string;
  tasks: readonly TemplateTask[];
}

function t(
  name: string,
  estimateHours: number,
  after: number[],
  description: string,
): TemplateTask {
  // Typical work lands between three quarters of its estimate and half as much again.
  const estimateRange = { low: Math.round(estimateHours * 1.5) / 2, high: estimateHours * 1.5 };
  return { name, description, estimateHours, estimateRange, after };
}

function tpl(
  id: string,
  name: string,
  category: string,
  description: string,
  tasks: TemplateTask[],
): TemplateDef {
  return { id, name, category, description, tasks };
}

const CATALOGUE: TemplateDef[] = [
  tpl(
    'tpl_software-release',
    'Software release',
    'software',
    'Ship a new version of a server-side product: freeze, harden, document and roll out.',
    [
      /* 0 */ t('Define release scope', 4, [], 'Agree which features and fixes make the cut.'),
      /* 1 */ t('Feature freeze', 4, [0], 'Cut the release branch and stop merging new features.'),
      /* 2 */ t('Finish remaining features', 40, [0], 'Complete in-flight work that is in scope.'),
      /* 3 */ t(
        'Write release notes draft',
        8,
        [0],
        'Summarise user-facing changes and upgrade steps.',
      ),
      /* 4 */ t(
        'Update changelog and docs',
        16,
        [2, 3],
        'Bring reference docs in line with shipped behaviour.',
      ),
      /* 5 */ t(
        'Run regression test suite',
        24,
        [1, 2],
        'Full automated and manual regression on the release branch.',
      ),
      /* 6 */ t(
        'Performance and load testing',
        16,
        [1, 2],
        'Compare latency and throughput with the previous release.',
      ),
      /* 7 */ t(
        'Security review',
        16,
        [1],
        'Dependency audit and review of security-sensitive changes.',
      ),
      /* 8 */ t(
        'Fix release blockers',
        24,
        [5, 6, 7],
        'Triage and fix every bug marked as a blocker.',
      ),
      /* 9 */ t(
        'Prepare database migrations',
        12,
        [2],
        'Write and dry-run schema migrations against a copy of production.',
      ),
      /* 10 */ t(
        'Build release candidate',
        4,
        [8, 9],
        'Tag and build signed artefacts for the candidate.',
      ),
      /* 11 */ t(
        'Staging deployment and smoke test',
        8,
        [10],
        'Deploy the candidate to staging and run smoke checks.',
      ),
      /* 12 */ t(
        'Go/no-go meeting',
        4,
        [4, 11],
        'Engineering, support and product sign off on the release.',
      ),
      /* 13 */ t('Production rollout', 8, [12], 'Canary then progressive rollout with monitoring.'),
      /* 14 */ t(
        'Publish release announcement',
        4,
        [13],
        'Publish notes, blog post and customer email.',
      ),
      /* 15 */ t(
        'Post-release monitoring',
        16,
        [13],
        'Watch error rates and support tickets for regressions.',
      ),
    ],
  ),

  tpl(
    'tpl_mobile-app-launch',
    'Mobile app launch',
    'software',
    'Take a mobile app from feature-complete to live in both app stores.',
    [
      /* 0 */ t('Finalise launch feature set', 8, [], 'Lock the features shipping in version 1.0.'),
      /* 1 */ t('Complete iOS build', 40, [0], 'Finish and stabilise the iOS client.'),
      /* 2 */ t('Complete Android build', 40, [0], 'Finish and stabilise the Android client.'),
      /* 3 */ t(
        'Harden backend APIs',
        32,
        [0],
        'Rate limits, monitoring and scaling for launch traffic.',
      ),
      /* 4 */ t(
        'Set up crash reporting and analytics',
        8,
        [1, 2],
        'Integrate crash reporting and key funnel events.',
      ),
      /* 5 */ t(
        'Internal beta',
        24,
        [3, 4],
        'Distribute to staff via TestFlight and internal testing track.',
      ),
      /* 6 */ t(
        'Write store listing copy',
        8,
        [0],
        'Title, subtitle, description and keywords for both stores.',
      ),
      /* 7 */ t(
        'Produce screenshots and preview video',
        16,
        [1, 2],
        'Capture device screenshots and a short preview video.',
      ),
      /* 8 */ t(
        'Privacy policy and data disclosures',
        8,
        [0],
        'Publish the privacy policy and fill in store privacy forms.',
      ),
      /* 9 */ t(
        'Fix beta feedback',
        32,
        [5],
        'Address crashes and usability issues found in beta.',
      ),
      /* 10 */ t(
        'Submit to App Store review',
        4,
        [6, 7, 8, 9],
        'Upload the release build and submit for review.',
      ),
      /* 11 */ t(
        'Submit to Google Play review',
        4,
        [6, 7, 8, 9],
        'Upload the release bundle and submit for review.',
      ),
      /* 12 */ t(
        'Prepare launch marketing',
        24,
        [6, 7],
        'Landing page, social posts and press kit.',
      ),
      /* 13 */ t('Public launch', 4, [10, 11, 12], 'Release in both stores and announce.'),
      /* 14 */ t(
        'Monitor reviews and crash rates',
        16,
        [13],
        'Respond to reviews and watch stability metrics.',
      ),
    ],
  ),

  tpl(
    'tpl_api-deprecation',
    'API version deprecation',
    'software',
    'Retire an old API version without breaking the customers who still depend on it.',
    [
      /* 0 */ t(
        'Measure usage of the old API',
        8,
        [],
        'Identify callers and traffic per endpoint and per customer.',
      ),
      /* 1 */ t(
        'Decide deprecation timeline',
        4,
        [0],
        'Agree the sunset date and enforcement milestones.',
      ),
      /* 2 */ t(
        'Write migration guide',
        16,
        [1],
        'Endpoint-by-endpoint mapping to the new API version.',
      ),
      /* 3 */ t(
        'Add deprecation headers',
        8,
        [1],
        'Return Deprecation and Sunset headers on old endpoints.',
      ),
      /* 4 */ t(
        'Announce deprecation',
        4,
        [2],
        'Changelog entry, blog post and developer newsletter.',
      ),
      /* 5 */ t(
        'Email affected customers',
        8,
        [0, 4],
        'Direct notice to every account still calling the old API.',
      ),
      /* 6 */ t(
        'Build usage dashboard',
        12,
        [0],
        'Track remaining old-API traffic per customer over time.',
      ),
      /* 7 */ t(
        'Support top customers in migrating',
        40,
        [5, 6],
        'Hands-on help for the largest remaining callers.',
      ),
      /* 8 */ t(
        'Scheduled brownouts',
        16,
        [3, 5],
        'Short planned outages of the old API to surface stragglers.',
      ),
      /* 9 */ t(
        'Final reminder notice',
        4,
        [7, 8],
        'Last warning to remaining callers before shutdown.',
      ),
      /* 10 */ t(
        'Disable old endpoints',
        4,
        [9],
        'Return 410 Gone from all old-version endpoints.',
      ),
      /* 11 */ t('Remove legacy code', 24, [10], 'Delete old handlers, tests and documentation.'),
    ],
  ),

  tpl(
    'tpl_product-launch',
    'Product launch',
    'product',
    'Bring a new product or major feature to market with sales, support and marketing aligned.',
    [
      /* 0 */ t(
        'Define target customer and positioning',
        16,
        [],
        'Who it is for, the problem it solves and why it wins.',
      ),
      /* 1 */ t(
        'Set pricing and packaging',
        16,
        [0],
        'Plans, price points and what each tier includes.',
      ),
      /* 2 */ t(
        'Finish product build',
        80,
        [0],
        'Complete the launch scope to production quality.',
      ),
      /* 3 */ t(
        'Beta with design partners',
        40,
        [2],
        'Run the product with a handful of friendly customers.',
      ),
      /* 4 */ t(
        'Write messaging and launch copy',
        16,
        [0],
        'Headline, key benefits and proof points.',
      ),
      /* 5 */ t('Build launch landing page', 24, [4, 1], 'Product page with pricing and sign-up.'),
      /* 6 */ t(
        'Create sales enablement kit',
        16,
        [1, 4],
        'Pitch deck, battlecard and FAQ for the sales team.',
      ),
      /* 7 */ t('Train support team', 8, [3], 'Walkthrough, known issues and escalation paths.'),
      /* 8 */ t(
        'Write help-centre articles',
        16,
        [3],
        'Getting-started and troubleshooting articles.',
      ),
      /* 9 */ t(
        'Collect customer testimonials',
        8,
        [3],
        'Quotes and a short case study from beta customers.',
      ),
      /* 10 */ t(
        'Brief press and analysts',
        12,
        [4, 9],
        'Embargoed briefings ahead of launch day.',
      ),
      /* 11 */ t(
        'Launch readiness review',
        4,
        [5, 6, 7, 8, 10],
        'Check every team is ready and agree the launch date.',
      ),
      /* 12 */ t('Launch day', 8, [11], 'Flip the switch, publish announcements and monitor.'),
      /* 13 */ t(
        'Post-launch retrospective',
        4,
        [12],
        'Review metrics against goals and capture lessons.',
      ),
    ],
  ),

  tpl(
    'tpl_hire-a-role',
    'Hiring a role',
    'hiring',
    'Open, source, interview and close a new hire for a single role.',
    [
      /* 0 */ t(
        'Confirm headcount and budget',
        4,
        [],
        'Get approval for the role and its salary band.',
      ),
      /* 1 */ t(
        'Write job description',
        8,
        [0],
        'Responsibilities, requirements and what success looks like.',
      ),
      /* 2 */ t(
        'Define interview loop and scorecard',
        8,
        [0],
        'Stages, interviewers and the criteria each one assesses.',
      ),
      /* 3 */ t('Publish job posting', 4, [1], 'Post on the careers page and job boards.'),
      /* 4 */ t(
        'Brief recruiters and ask for referrals',
        4,
        [1],
        'Kick-off with recruiting and an internal referral call.',
      ),
      /* 5 */ t(
        'Source candidates',
        40,
        [3, 4],
        'Outbound sourcing and screening of inbound applicants.',
      ),
      /* 6 */ t(
        'Train interviewers',
        8,
        [2],
        'Calibrate the panel on the scorecard and questions.',
      ),
      /* 7 */ t('Phone screens', 24, [5], 'Short screening calls with shortlisted candidates.'),
      /* 8 */ t(
        'Onsite interviews',
        32,
        [6, 7],
        'Full interview loop for candidates who pass the screen.',
      ),
      /* 9 */ t('Debrief and decision', 4, [8], 'Panel debrief and hire/no-hire decision.'),
      /* 10 */ t('Reference checks', 8, [9], 'Speak to two or three references.'),
      /* 11 */ t('Extend offer', 4, [10], 'Prepare the offer letter and present it.'),
      /* 12 */ t(
        'Negotiate and close',
        8,
        [11],
        'Answer questions, negotiate and get a signed offer.',
      ),
    ],
  ),

  tpl(
    'tpl_conference',
    'Conference',
    'events',
    'Plan and run a one- or two-day in-person conference.',
    [
      /* 0 */ t('Set goals, budget and date', 8, [], 'Audience, size, budget and the target date.'),
      /* 1 */ t('Book venue', 16, [0], 'Shortlist, visit and contract the venue.'),
      /* 2 */ t('Open call for speakers', 8, [0], 'Publish the call for proposals and promote it.'),
      /* 3 */ t('Recruit sponsors', 40, [0], 'Sponsorship packages, outreach and contracts.'),
      /* 4 */ t(
        'Launch event website',
        24,
        [1],
        'Site with date, venue, agenda placeholder and registration.',
      ),
      /* 5 */ t(
        'Review talks and build agenda',
        24,
        [2],
        'Programme committee selects talks and builds the schedule.',
      ),
      /* 6 */ t('Open ticket sales', 8, [4], 'Set up ticketing, pricing tiers and discount codes.'),
      /* 7 */ t(
        'Arrange catering and AV',
        16,
        [1],
        'Menus, dietary requirements, screens, microphones and streaming.',
      ),
      /* 8 */ t(
        'Book speaker travel and hotels',
        16,
        [5],
        'Flights and rooms for confirmed speakers.',
      ),
      /* 9 */ t(
        'Promote the event',
        40,
        [5, 6],
        'Email, social and community promotion to drive registrations.',
      ),
      /* 10 */ t(
        'Produce signage and badges',
        12,
        [3, 5],
        'Printed signage, sponsor banners and attendee badges.',
      ),
      /* 11 */ t(
        'Recruit and brief volunteers',
        12,
        [5],
        'Volunteer roster, shifts and a run-through.',
      ),
      /* 12 */ t('Final run-of-show', 8, [7, 8, 10, 11], 'Minute-by-minute plan for both days.'),
      /* 13 */ t('Run the event', 16, [9, 12], 'Doors open: registration, talks and breaks.'),
      /* 14 */ t(
        'Publish recordings and send survey',
        12,
        [13],
        'Upload talk videos and collect attendee feedback.',
      ),
      /* 15 */ t(
        'Settle invoices and report',
        8,
        [13],
        'Pay vendors and report on budget and attendance.',
      ),
    ],
  ),

  tpl(
    'tpl_marketing-campaign',
    'Marketing campaign',
    'marketing',
    'Plan, produce and run a multi-channel marketing campaign.',
    [
      /* 0 */ t(
        'Campaign brief',
        8,
        [],
        'Objective, audience, message, budget and success metrics.',
      ),
      /* 1 */ t('Creative concept', 16, [0], 'Big idea, key visual and tagline.'),
      /* 2 */ t(
        'Channel plan and budget split',
        8,
        [0],
        'Which channels, when and how much spend on each.',
      ),
      /* 3 */ t(
        'Set up tracking and UTM links',
        8,
        [2],
        'Campaign codes, conversion events and a dashboard.',
      ),
      /* 4 */ t('Write email sequence', 16, [1], 'Three to five emails for the target segments.'),
      /* 5 */ t(
        'Produce paid ad creatives',
        24,
        [1, 2],
        'Ad variants sized for each paid channel.',
      ),
      /* 6 */ t(
        'Build campaign landing page',
        24,
        [1],
        'Dedicated landing page with a clear call to action.',
      ),
      /* 7 */ t(
        'Write blog and social content',
        16,
        [1, 2],
        'Supporting posts and an organic social calendar.',
      ),
      /* 8 */ t(
        'Legal and brand review',
        8,
        [4, 5, 6, 7],
        'Check claims, trademarks and brand guidelines.',
      ),
      /* 9 */ t('Launch campaign', 4, [3, 8], 'Schedule emails, start ads and publish content.'),
      /* 10 */ t(
        'Optimise mid-flight',
        16,
        [9],
        'Shift budget to the best-performing channels and variants.',
      ),
      /* 11 */ t('Campaign results report', 8, [10], 'Results against goals and recommendations.'),
    ],
  ),

  tpl(
    'tpl_office-move',
    'Office move',
    'operations',
    'Move a team to a new office with minimal disruption.',
    [
      /* 0 */ t(
        'Define space requirements',
        8,
        [],
        'Headcount, desks, meeting rooms and growth allowance.',
      ),
      /* 1 */ t(
        'Select and sign lease',
        40,
        [0],
        'Tour options, negotiate terms and sign the lease.',
      ),
      /* 2 */ t('Design floor plan', 24, [1], 'Seating plan, meeting rooms and shared areas.'),
      /* 3 */ t('Order furniture', 8, [2], 'Desks, chairs and meeting-room furniture.'),
      /* 4 */ t('Plan network and IT', 16, [2], 'Cabling, Wi-Fi, printers and security systems.'),
      /* 5 */ t('Hire movers', 8, [1], 'Quotes, insurance and booking a moving date.'),
      /* 6 */ t(
        'Fit-out and build works',
        80,
        [2],
        'Partitions, kitchen, lighting and decoration.',
      ),
      /* 7 */ t('Install network and IT', 24, [4, 6], 'Install cabling, access points and AV.'),
      /* 8 */ t(
        'Furniture delivery and assembly',
        16,
        [3, 6],
        'Receive, assemble and place furniture.',
      ),
      /* 9 */ t(
        'Update address with suppliers and registrations',
        8,
        [1],
        'Banks, suppliers, registrations and website.',
      ),
      /* 10 */ t('Pack and label', 16, [5], 'Staff pack desks; label crates by new seat.'),
      /* 11 */ t(
        'Communicate move plan to staff',
        4,
        [2, 5],
        'Dates, seating, what to pack and first-day info.',
      ),
      /* 12 */ t('Moving day', 8, [7, 8, 10, 11], 'Movers transport everything to the new office.'),
      /* 13 */ t('Unpack and check IT', 8, [12], 'Unpack crates and confirm every desk works.'),
      /* 14 */ t('Hand back old premises', 16, [12, 9], 'Clear out, repair and return the keys.'),
    ],
  ),

  tpl(
    'tpl_employee-onboarding',
    'Employee onboarding',
    'people',
    'Get a new hire set up, welcomed and productive in their first month.',
    [
      /* 0 */ t('Signed offer received', 4, [], 'Confirm start date and role details.'),
      /* 1 */ t(
        'Send contract and paperwork',
        4,
        [0],
        'Employment contract, tax and payroll forms.',
      ),
      /* 2 */ t(
        'Order laptop and equipment',
        8,
        [0],
        'Laptop, monitor and peripherals shipped before day one.',
      ),
      /* 3 */ t('Create accounts and access', 4, [1], 'Email, chat, code hosting and HR systems.'),
      /* 4 */ t('Assign onboarding buddy', 4, [0], 'Pick a buddy and brief them.'),
      /* 5 */ t(
        'Prepare 30-60-90 day plan',
        8,
        [0],
        'Manager writes goals for the first three months.',
      ),
      /* 6 */ t(
        'Send welcome pack',
        4,
        [1, 4],
        'First-day logistics, agenda and team introductions.',
      ),
      /* 7 */ t('First day', 8, [2, 3, 6], 'Welcome, equipment set-up and meet the team.'),
      /* 8 */ t(
        'Company orientation sessions',
        16,
        [7],
        'Mission, product, customers and how we work.',
      ),
      /* 9 */ t(
        'Security and compliance training',
        4,
        [7],
        'Mandatory security and policy training.',
      ),
      /* 10 */ t(
        'Team and tooling walkthrough',
        8,
        [7, 5],
        'Codebase or systems tour and development environment set-up.',
      ),
      /* 11 */ t(
        'First starter project',
        40,
        [10],
        'A small, real piece of work shipped end to end.',
      ),
      /* 12 */ t(
        '30-day check-in',
        4,
        [8, 9, 11],
        'Manager and new hire review progress and feedback.',
      ),
    ],
  ),

  tpl(
    'tpl_research-study',
    'User research study',
    'research',
    'Plan and run a qualitative user research study and share the findings.',
    [
      /* 0 */ t('Define research questions', 8, [], 'What decisions the study must inform.'),
      /* 1 */ t('Choose method and write plan', 8, [0], 'Method, sample size, timeline and roles.'),
      /* 2 */ t('Write screener survey', 4, [1], 'Questions to find the right participants.'),
      /* 3 */ t('Write discussion guide', 12, [1], 'Interview script and tasks.'),
      /* 4 */ t('Ethics and consent review', 8, [1], 'Consent form and data handling approved.'),
      /* 5 */ t('Recruit participants', 32, [2, 4], 'Screen, schedule and confirm participants.'),
      /* 6 */ t(
        'Pilot session',
        4,
        [3, 4],
        'Dry run of the guide with a colleague or friendly user.',
      ),
      /* 7 */ t(
        'Revise discussion guide',
        4,
        [6],
        'Fix timing and unclear questions found in the pilot.',
      ),
      /* 8 */ t('Run interview sessions', 40, [5, 7], 'Conduct and record all sessions.'),
      /* 9 */ t(
        'Transcribe and tag notes',
        24,
        [8],
        'Transcripts and tagged observations per session.',
      ),
      /* 10 */ t('Synthesis workshop', 16, [9], 'Affinity mapping with the team to find themes.'),
      /* 11 */ t('Write findings report', 16, [10], 'Key insights, evidence and recommendations.'),
      /* 12 */ t('Share-out presentation', 4, [11], 'Present findings to stakeholders.'),
    ],
  ),

  tpl(
    'tpl_website-redesign',
    'Website redesign',
    'marketing',
    'Redesign and relaunch the company website.',
    [
      /* 0 */ t(
        'Audit current site and analytics',
        16,
        [],
        'Traffic, top pages, conversion and pain points.',
      ),
      /* 1 */ t(
        'Stakeholder interviews',
        12,
        [],
        'Goals and requirements from sales, marketing and support.',
      ),
      /* 2 */ t(
        'Define sitemap and requirements',
        12,
        [0, 1],
        'Information architecture and must-have features.',
      ),
      /* 3 */ t('Choose CMS and hosting', 8, [2], 'Evaluate options and decide the platform.'),
      /* 4 */ t('Wireframes', 24, [2], 'Low-fidelity layouts for key page types.'),
      /* 5 */ t('Visual design', 40, [4], 'High-fidelity designs and a component library.'),
      /* 6 */ t(
        'Write and migrate content',
        40,
        [2],
        'New copy for key pages and migration of the rest.',
      ),
      /* 7 */ t(
        'Set up CMS and environments',
        16,
        [3],
        'CMS instance, staging environment and deploy pipeline.',
      ),
      /* 8 */ t(
        'Build page templates',
        60,
        [5, 7],
        'Implement designs as CMS templates and components.',
      ),
      /* 9 */ t('Load content into CMS', 16, [6, 8], 'Populate every page in the new CMS.'),
      /* 10 */ t('Plan redirects and SEO', 12, [2], 'Redirect map, metadata and structured data.'),
      /* 11 */ t(
        'QA and accessibility testing',
        24,
        [9],
        'Cross-browser, mobile and accessibility checks.',
      ),
      /* 12 */ t('Launch', 4, [10, 11], 'Switch DNS, apply redirects and verify.'),
      /* 13 */ t('Post-launch monitoring', 8, [12], 'Watch 404s, rankings and conversion.'),
    ],
  ),

  tpl(
    'tpl_incident-postmortem',
    'Incident postmortem',
    'operations',
    'Investigate a production incident and follow through on the remediation.',
    [
      /* 0 */ t('Assign postmortem owner', 4, [], 'Pick an owner and schedule the review.'),
      /* 1 */ t(
        'Build incident timeline',
        8,
        [0],
        'Reconstruct events from logs, alerts and chat.',
      ),
      /* 2 */ t(
        'Gather metrics and customer impact',
        8,
        [0],
        'Duration, affected customers and error budgets burned.',
      ),
      /* 3 */ t(
        'Root cause analysis',
        12,
        [1, 2],
        'Identify contributing causes, not just the trigger.',
      ),
      /* 4 */ t(
        'Draft postmortem document',
        8,
        [3],
        'Summary, timeline, causes and proposed actions.',
      ),
      /* 5 */ t('Postmortem review meeting', 4, [4], 'Blameless review with everyone involved.'),
      /* 6 */ t(
        'Customer communication',
        4,
        [2, 5],
        'Publish an incident report for affected customers.',
      ),
      /* 7 */ t('Fix root cause', 32, [5], 'Implement the primary remediation.'),
      /* 8 */ t(
        'Improve alerting',
        16,
        [5],
        'Add or tune alerts that would have caught it sooner.',
      ),
      /* 9 */ t('Update runbooks', 8, [5], 'Document diagnosis and mitigation steps.'),
      /* 10 */ t(
        'Verify remediations and close',
        4,
        [6, 7, 8, 9],
        'Confirm every action item is done and close the incident.',
      ),
    ],
  ),
];

function deepFreeze(defs: TemplateDef[]): readonly TemplateDef[] {
  for (const def of defs) {
    for (const task of def.tasks) {
      Object.freeze(task.after);
      Object.freeze(task);
    }
    Object.freeze(def.tasks);
    Object.freeze(def);
  }
  return Object.freeze(defs);
}

/** The built-in template catalogue. Deeply frozen. */
export const TEMPLATES: readonly TemplateDef[] = deepFreeze(CATALOGUE);
