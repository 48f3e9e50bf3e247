import type { Channel } from './channel.js';

/**
 * The channel rules as data: referrer host lists, Android app ids, UTM value
 * sets and click-id parameters. `channel.ts` turns these tables into lookup maps
 * once at module load; nothing here is code that runs per event.
 *
 * Sources cited below (facts only — which host belongs to which service and
 * category; no code or prose is taken from them):
 * - GA4: Google's default channel group definitions and its downloadable list of
 *   search, social, video and shopping sites
 *   (https://support.google.com/analytics/answer/9756891), as mirrored in
 *   plausible/analytics `priv/ga4-source-categories.csv`.
 * - Matomo: matomo-org/searchengine-and-social-list, files `SearchEngines.yml`,
 *   `Socials.yml` and `AIAssistants.yml`.
 * - Provider: the service's own domains / Android application id as published by
 *   the provider (their site, app store listing or link format).
 * Where we deliberately depart from a source, the entry says why.
 */

/** One named service: the display name used as `source` and the hosts it owns. */
export interface HostEntry {
  /** Human name reported as `source` (e.g. `Google`, `Hacker News`). */
  readonly name: string;
  /**
   * Referrer hosts, lowercased, without a leading `www.`. Subdomains match too
   * (`old.reddit.com` → `reddit.com`) unless the host is in
   * `HOSTS_WITHOUT_SUBDOMAINS`.
   */
  readonly hosts: readonly string[];
  /** Android application ids seen as `android-app://<id>` referrers. */
  readonly apps?: readonly string[];
  /**
   * Extra `utm_source` spellings that mean this service (lowercase). The name
   * itself, lowercased and with spaces removed, is always accepted.
   */
  readonly aliases?: readonly string[];
}

/** All services of one channel from one citation. */
export interface HostList {
  readonly channel: Channel;
  /** Where the facts come from (see the header). */
  readonly cite: string;
  readonly entries: readonly HostEntry[];
}

const GA4 =
  'GA4 source categories (support.google.com/analytics/answer/9756891; plausible/analytics priv/ga4-source-categories.csv)';
const MATOMO_SEARCH = 'matomo-org/searchengine-and-social-list SearchEngines.yml';
const MATOMO_SOCIAL = 'matomo-org/searchengine-and-social-list Socials.yml';
const MATOMO_AI = 'matomo-org/searchengine-and-social-list AIAssistants.yml';
const PROVIDER = "providers' own domains and Android application ids";

// Search engines. Google's country domains (google.de, google.co.uk,
// google.com.au, …) are not listed one by one: `channel.ts` folds any
// `google.<tld>` onto `google.com` (see GOOGLE_TLD_RULE).
const SEARCH_MATOMO: HostList = {
  channel: 'Search',
  cite: `${MATOMO_SEARCH}; ${GA4}`,
  entries: [
    {
      name: 'Google',
      hosts: ['google.com', 'encrypted.google.com', 'search.google.com', 'ipv6.google.com'],
      apps: ['com.google.android.googlequicksearchbox', 'com.google.android.apps.searchlite'],
    },
    { name: 'Google Images', hosts: ['images.google.com'] },
    { name: 'Google News', hosts: ['news.google.com'] },
    { name: 'Google Scholar', hosts: ['scholar.google.com'] },
    { name: 'Google Lens', hosts: ['lens.google.com'] },
    // GA4 files the Play store under search (people search the store).
    { name: 'Google Play', hosts: ['play.google.com'] },
    { name: 'Bing', hosts: ['bing.com', 'cn.bing.com', 'cc.bingj.com'], apps: ['com.microsoft.bing'] },
    { name: 'DuckDuckGo', hosts: ['duckduckgo.com'], apps: ['com.duckduckgo.mobile.android'], aliases: ['ddg'] },
    { name: 'Yahoo', hosts: ['yahoo.com', 'search.yahoo.com'] },
    { name: 'Yahoo Japan', hosts: ['yahoo.co.jp', 'search.yahoo.co.jp'] },
    {
      name: 'Yandex',
      hosts: [
        'yandex.ru',
        'yandex.com',
        'yandex.com.tr',
        'yandex.by',
        'yandex.kz',
        'yandex.ua',
        'yandex.uz',
        'yandex.fr',
        'ya.ru',
      ],
    },
    { name: 'Baidu', hosts: ['baidu.com'] },
    { name: 'Ecosia', hosts: ['ecosia.org'] },
    { name: 'Brave Search', hosts: ['search.brave.com'], aliases: ['brave'] },
    // ixquick.com is Startpage's former name; Matomo still lists its hosts.
    { name: 'Startpage', hosts: ['startpage.com', 'ixquick.com'] },
    { name: 'Qwant', hosts: ['qwant.com'] },
    { name: 'Naver', hosts: ['naver.com', 'search.naver.com'] },
    { name: 'Seznam', hosts: ['seznam.cz', 'search.seznam.cz'] },
    { name: 'Sogou', hosts: ['sogou.com'] },
    { name: '360 Search', hosts: ['so.com', 'so.360.cn'] },
    { name: 'Daum', hosts: ['search.daum.net'] },
    { name: 'Kagi', hosts: ['kagi.com'] },
    { name: 'Mojeek', hosts: ['mojeek.com'] },
    { name: 'Presearch', hosts: ['presearch.com'] },
    { name: 'Swisscows', hosts: ['swisscows.com'] },
    { name: 'MetaGer', hosts: ['metager.de', 'metager.org'] },
    { name: 'Yep', hosts: ['yep.com'] },
    { name: 'Lilo', hosts: ['search.lilo.org'] },
    { name: 'Stract', hosts: ['stract.com'] },
    { name: 'Coc Coc', hosts: ['coccoc.com'] },
    { name: 'Ask', hosts: ['ask.com', 'search.ask.com'] },
    { name: 'AOL', hosts: ['search.aol.com', 'search.aol.co.uk', 'suche.aol.de'] },
    { name: 'Dogpile', hosts: ['dogpile.com'] },
    { name: 'Lycos', hosts: ['search.lycos.com'] },
    { name: 'Mail.ru Search', hosts: ['go.mail.ru'] },
    { name: 'Rambler', hosts: ['nova.rambler.ru'] },
    { name: 'Onet', hosts: ['szukaj.onet.pl'] },
    { name: 'Najdi.si', hosts: ['najdi.si'] },
    { name: 'Virgilio', hosts: ['ricerca.virgilio.it'] },
    { name: 'Startsiden', hosts: ['startsiden.no'] },
    { name: 'Kvasir', hosts: ['kvasir.no'] },
    { name: 'Search.ch', hosts: ['search.ch'] },
    { name: 'T-Online Suche', hosts: ['suche.t-online.de'] },
    // MSN's new-tab page (ntp.msn.com) sends Bing-backed search traffic; GA4 lists msn.com as search.
    { name: 'MSN', hosts: ['msn.com'] },
  ],
};

// Newer engines not (yet) in the lists above; the providers' own search hosts.
const SEARCH_PROVIDERS: HostList = {
  channel: 'Search',
  cite: PROVIDER,
  entries: [
    { name: 'Petal Search', hosts: ['petalsearch.com'] },
    { name: 'Marginalia', hosts: ['search.marginalia.nu'] },
  ],
};

// AI assistants are their own channel (`docs/ingestion.md` "Channels"). Matomo lists
// perplexity.ai under search engines too; we follow its AI list instead.
const AI_MATOMO: HostList = {
  channel: 'AI',
  cite: MATOMO_AI,
  entries: [
    {
      name: 'ChatGPT',
      hosts: ['chatgpt.com', 'chat.openai.com', 'labs.openai.com'],
      apps: ['com.openai.chatgpt'],
      aliases: ['openai'],
    },
    { name: 'Perplexity', hosts: ['perplexity.ai'], apps: ['ai.perplexity.app.android'] },
    { name: 'Claude', hosts: ['claude.ai'], apps: ['com.anthropic.claude'] },
    {
      name: 'Gemini',
      hosts: ['gemini.google.com', 'bard.google.com'],
      apps: ['com.google.android.apps.bard'],
      aliases: ['bard'],
    },
    { name: 'NotebookLM', hosts: ['notebooklm.google.com'] },
    { name: 'Copilot', hosts: ['copilot.microsoft.com'], apps: ['com.microsoft.copilot'] },
    { name: 'DeepSeek', hosts: ['chat.deepseek.com'] },
    { name: 'Grok', hosts: ['grok.com'] },
    { name: 'Meta AI', hosts: ['meta.ai'] },
    { name: 'Le Chat', hosts: ['chat.mistral.ai'], aliases: ['mistral'] },
    { name: 'Qwen', hosts: ['chat.qwen.ai'] },
    { name: 'ChatGLM', hosts: ['chatglm.cn'] },
    { name: 'Baidu AI', hosts: ['yiyan.baidu.com', 'ai.baidu.com'] },
    { name: 'Duck.ai', hosts: ['duck.ai'] },
    { name: 'You.com', hosts: ['you.com'] },
    { name: 'iAsk', hosts: ['iask.ai'] },
    { name: 'Jasper', hosts: ['app.jasper.ai'] },
    { name: 'Writesonic', hosts: ['app.writesonic.com'] },
  ],
};

const AI_PROVIDERS: HostList = {
  channel: 'AI',
  cite: PROVIDER,
  entries: [
    // Microsoft 365's Copilot and the Copilot pane in Edge (served from bing.com).
    { name: 'Copilot', hosts: ['copilot.cloud.microsoft', 'edgeservices.bing.com'] },
    { name: 'Kimi', hosts: ['kimi.com', 'kimi.moonshot.cn'] },
    { name: 'Poe', hosts: ['poe.com'] },
    { name: 'Phind', hosts: ['phind.com'] },
    { name: 'Pi', hosts: ['pi.ai'] },
  ],
};

// Communities: forums, Q&A sites, link aggregators and team chat — places where
// people discuss and vote (`docs/ingestion.md` "Channels"). GA4 and Matomo file most of these
// under social; we split them out because they behave differently (one thread
// sends a burst, and the audience is self-selected).
const COMMUNITIES_LISTED: HostList = {
  channel: 'Communities',
  cite: `${GA4}; ${MATOMO_SOCIAL} (recategorised from social)`,
  entries: [
    { name: 'Reddit', hosts: ['reddit.com'], apps: ['com.reddit.frontpage'] },
    {
      name: 'Hacker News',
      hosts: ['news.ycombinator.com'],
      aliases: ['hn', 'hackernews', 'ycombinator', 'ycombinator.com'],
    },
    { name: 'Stack Overflow', hosts: ['stackoverflow.com'] },
    {
      name: 'Stack Exchange',
      hosts: ['stackexchange.com', 'superuser.com', 'serverfault.com', 'askubuntu.com', 'stackapps.com'],
    },
    { name: 'Quora', hosts: ['quora.com'] },
    // Matomo lists GitHub as social; issues, discussions and READMEs are where developers talk.
    { name: 'GitHub', hosts: ['github.com'] },
    { name: 'Discord', hosts: ['discord.com', 'discord.gg', 'discordapp.com'], apps: ['com.discord'] },
    { name: 'Slashdot', hosts: ['slashdot.org'] },
    { name: 'Digg', hosts: ['digg.com'] },
    { name: 'V2EX', hosts: ['v2ex.com'] },
    { name: 'Google Groups', hosts: ['groups.google.com'] },
    // Naver Cafe is Naver's forum product (GA4: social).
    { name: 'Naver Cafe', hosts: ['cafe.naver.com'] },
    { name: 'Fandom', hosts: ['fandom.com'] },
  ],
};

const COMMUNITIES_PROVIDERS: HostList = {
  channel: 'Communities',
  cite: PROVIDER,
  entries: [
    // redd.it is Reddit's own short-link domain (GA4 lists other reddit hosts).
    { name: 'Reddit', hosts: ['redd.it'] },
    // hn.algolia.com is the official Hacker News search.
    { name: 'Hacker News', hosts: ['hn.algolia.com'] },
    { name: 'Indie Hackers', hosts: ['indiehackers.com'] },
    { name: 'Product Hunt', hosts: ['producthunt.com'] },
    { name: 'Lobsters', hosts: ['lobste.rs'] },
    { name: 'DEV Community', hosts: ['dev.to'], aliases: ['devto'] },
    // Slack rewrites outbound links through slack-redir.net.
    { name: 'Slack', hosts: ['slack.com', 'slack-redir.net'], apps: ['com.slack'] },
    {
      name: 'Microsoft Teams',
      hosts: ['teams.microsoft.com', 'teams.live.com'],
      apps: ['com.microsoft.teams'],
      aliases: ['teams'],
    },
    { name: 'Lemmy', hosts: ['lemmy.world', 'lemmy.ml'] },
    { name: 'Tildes', hosts: ['tildes.net'] },
    { name: 'Stacker News', hosts: ['stacker.news'] },
    { name: 'Habr', hosts: ['habr.com'] },
    { name: 'Qiita', hosts: ['qiita.com'] },
    { name: 'Zenn', hosts: ['zenn.dev'] },
    { name: 'Baidu Tieba', hosts: ['tieba.baidu.com'] },
  ],
};

// Social: the feeds and messengers.
const SOCIAL_LISTED: HostList = {
  channel: 'Social',
  cite: `${MATOMO_SOCIAL}; ${GA4}`,
  entries: [
    { name: 'X', hosts: ['twitter.com', 'x.com', 't.co'], apps: ['com.twitter.android'], aliases: ['x', 'twitter'] },
    {
      name: 'Facebook',
      hosts: ['facebook.com', 'fb.me', 'fb.com'],
      apps: ['com.facebook.katana', 'com.facebook.lite'],
      aliases: ['fb'],
    },
    { name: 'Messenger', hosts: ['messenger.com', 'm.me'], apps: ['com.facebook.orca'] },
    { name: 'Instagram', hosts: ['instagram.com'], apps: ['com.instagram.android'], aliases: ['ig'] },
    { name: 'LinkedIn', hosts: ['linkedin.com', 'lnkd.in'], apps: ['com.linkedin.android'] },
    { name: 'Threads', hosts: ['threads.net', 'threads.com'], apps: ['com.instagram.barcelona'] },
    { name: 'Bluesky', hosts: ['bsky.app', 'skyfeed.app'], apps: ['xyz.blueskyweb.app'], aliases: ['bsky'] },
    {
      // Instances listed by Matomo; any other instance is a plain referral, since an
      // instance host cannot be told from any other site by its name.
      name: 'Mastodon',
      hosts: [
        'mastodon.social',
        'mastodon.cloud',
        'mastodon.technology',
        'mastodon.xyz',
        'mastodon.at',
        'mastodon.art',
        'mamot.fr',
        'pawoo.net',
        'mstdn.io',
        'mstdn.jp',
        'friends.nico',
        'botsin.space',
        'social.tchncs.de',
        'fosstodon.org',
        'chaos.social',
        'vis.social',
        'typo.social',
        'front-end.social',
        'hachyderm.io',
        'mastodon.online',
        'newsie.social',
        'mstdn.social',
        'indieweb.social',
        'sfba.social',
        'mas.to',
        'mstdn.party',
        'c.im',
        'mastodonapp.uk',
        'universeodon.com',
        'social.vivaldi.net',
        'ohai.social',
        'toot.community',
        'masto.ai',
        'mastodon.scot',
        'mastodon.world',
        'mastodon.nz',
        'graphics.social',
      ],
      apps: ['org.joinmastodon.android'],
    },
    {
      name: 'Pixelfed',
      hosts: ['pixelfed.social', 'pixelfed.de', 'pxlmo.com', 'metapixl.com', 'pixelfed.uno', 'pixey.org'],
    },
    { name: 'TikTok', hosts: ['tiktok.com'], apps: ['com.zhiliaoapp.musically', 'com.ss.android.ugc.trill'] },
    {
      name: 'Pinterest',
      hosts: [
        'pinterest.com',
        'pinterest.ca',
        'pinterest.ch',
        'pinterest.co.uk',
        'pinterest.com.au',
        'pinterest.de',
        'pinterest.dk',
        'pinterest.es',
        'pinterest.fr',
        'pinterest.ie',
        'pinterest.jp',
        'pinterest.nz',
        'pinterest.pt',
        'pinterest.se',
        'pinterest.at',
        'pinterest.it',
        'pinterest.com.mx',
        'pinterest.cl',
        'pinterest.co.kr',
        'pinterest.ph',
        'pinterest.ru',
      ],
      apps: ['com.pinterest'],
    },
    { name: 'Snapchat', hosts: ['snapchat.com'], apps: ['com.snapchat.android'] },
    { name: 'Tumblr', hosts: ['tumblr.com', 't.umblr.com'] },
    { name: 'VK', hosts: ['vk.com', 'vkontakte.ru'], aliases: ['vk', 'vkontakte'] },
    { name: 'Odnoklassniki', hosts: ['odnoklassniki.ru'] },
    { name: 'Weibo', hosts: ['weibo.com', 't.cn'] },
    { name: 'WeChat', hosts: ['wechat.com', 'mp.weixin.qq.com', 'open.weixin.qq.com', 'channels.weixin.qq.com'] },
    { name: 'Douyin', hosts: ['douyin.com'] },
    { name: 'Telegram', hosts: ['web.telegram.org', 't.me'], apps: ['org.telegram.messenger'] },
    { name: 'WhatsApp', hosts: ['whatsapp.com'] },
    { name: 'LINE', hosts: ['line.me'] },
    { name: 'Kakao', hosts: ['kakao.com'] },
    { name: 'XING', hosts: ['xing.com'] },
    { name: 'Workplace', hosts: ['workplace.com'] },
    { name: 'Flipboard', hosts: ['flipboard.com'] },
    { name: 'Medium', hosts: ['medium.com'] },
    { name: 'Pocket', hosts: ['getpocket.com'] },
    { name: 'Flickr', hosts: ['flickr.com'] },
    { name: 'Mixi', hosts: ['mixi.jp'] },
    { name: 'Yammer', hosts: ['yammer.com'] },
    { name: 'Hatena', hosts: ['b.hatena.ne.jp'] },
  ],
};

const SOCIAL_PROVIDERS: HostList = {
  channel: 'Social',
  cite: PROVIDER,
  entries: [
    { name: 'Pinterest', hosts: ['pin.it'] },
    { name: 'WhatsApp', hosts: ['wa.me'], apps: ['com.whatsapp'] },
    { name: 'LINE', hosts: [], apps: ['jp.naver.line.android'] },
    { name: 'Nextdoor', hosts: ['nextdoor.com'] },
  ],
};

// Email: webmail hosts and mail apps. GA4 lists a few webmail hosts
// (mail.yandex.ru, mail.rambler.ru, email.seznam.cz) as search; a click from an
// inbox is email, so we file them here.
const EMAIL_PROVIDERS: HostList = {
  channel: 'Email',
  cite: `${PROVIDER}; ${GA4} (webmail hosts recategorised from search)`,
  entries: [
    { name: 'Gmail', hosts: ['mail.google.com', 'inbox.google.com'], apps: ['com.google.android.gm'] },
    {
      name: 'Outlook',
      hosts: ['outlook.live.com', 'outlook.office.com', 'outlook.office365.com', 'outlook.cloud.microsoft'],
      apps: ['com.microsoft.office.outlook'],
    },
    {
      name: 'Yahoo Mail',
      hosts: ['mail.yahoo.com', 'mail.yahoo.co.jp'],
      apps: ['com.yahoo.mobile.client.android.mail'],
    },
    { name: 'AOL Mail', hosts: ['mail.aol.com'] },
    { name: 'Proton Mail', hosts: ['mail.proton.me', 'mail.protonmail.com'], apps: ['ch.protonmail.android'] },
    { name: 'Fastmail', hosts: ['app.fastmail.com', 'fastmail.com'] },
    { name: 'Tuta', hosts: ['app.tuta.com', 'mail.tutanota.com'] },
    { name: 'Zoho Mail', hosts: ['mail.zoho.com', 'mail.zoho.eu'] },
    { name: 'HEY', hosts: ['app.hey.com'] },
    { name: 'Yandex Mail', hosts: ['mail.yandex.ru', 'mail.yandex.com'] },
    { name: 'Mail.ru', hosts: ['e.mail.ru'] },
    { name: 'Rambler Mail', hosts: ['mail.rambler.ru'] },
    { name: 'Seznam Email', hosts: ['email.seznam.cz'] },
    { name: 'GMX', hosts: ['gmx.net', 'gmx.com', 'gmx.de'] },
    { name: 'WEB.DE', hosts: ['web.de'] },
    { name: 'QQ Mail', hosts: ['mail.qq.com'] },
    { name: '163 Mail', hosts: ['mail.163.com'] },
    { name: 'Samsung Email', hosts: [], apps: ['com.samsung.android.email.provider'] },
    { name: 'Spark', hosts: [], apps: ['com.readdle.spark'] },
  ],
};

// Newsletter: the newsletter platforms. Not a GA4 channel; we keep it apart
// from Email because a newsletter feature or sponsorship is a distinct way of
// getting traffic, and these platforms are recognisable by host (their web
// readers, link redirects and publication subdomains like `x.substack.com`).
const NEWSLETTER_PROVIDERS: HostList = {
  channel: 'Newsletter',
  cite: PROVIDER,
  entries: [
    { name: 'Substack', hosts: ['substack.com'], apps: ['com.substack.app'] },
    { name: 'beehiiv', hosts: ['beehiiv.com'] },
    { name: 'Buttondown', hosts: ['buttondown.com', 'buttondown.email'] },
    { name: 'Kit', hosts: ['kit.com', 'convertkit.com', 'ck.page'], aliases: ['convertkit'] },
    { name: 'Mailchimp', hosts: ['mailchi.mp', 'campaign-archive.com', 'list-manage.com'] },
    { name: 'Ghost', hosts: ['ghost.io'] },
    { name: 'MailerLite', hosts: ['mailerlite.com'] },
  ],
};

// Video platforms: GA4 has an organic video channel with its own site list.
const VIDEO_LISTED: HostList = {
  channel: 'Video',
  cite: `${GA4}; ${MATOMO_SOCIAL}`,
  entries: [
    { name: 'YouTube', hosts: ['youtube.com', 'youtu.be'], apps: ['com.google.android.youtube'], aliases: ['yt'] },
    { name: 'Vimeo', hosts: ['vimeo.com'] },
    { name: 'Twitch', hosts: ['twitch.tv'] },
    { name: 'Dailymotion', hosts: ['dailymotion.com'] },
    { name: 'Wistia', hosts: ['wistia.com', 'wistia.net'] },
    { name: 'TED', hosts: ['ted.com'] },
    { name: 'Netflix', hosts: ['netflix.com'] },
    { name: 'Hulu', hosts: ['hulu.com'] },
    { name: 'Disney+', hosts: ['disneyplus.com'] },
    { name: 'iQIYI', hosts: ['iqiyi.com', 'iq.com'] },
    { name: 'Youku', hosts: ['youku.com'] },
    // Both lists file Bilibili and Niconico under social; they are video sites.
    { name: 'Bilibili', hosts: ['bilibili.com'] },
    { name: 'Niconico', hosts: ['nicovideo.jp'] },
  ],
};

const VIDEO_PROVIDERS: HostList = {
  channel: 'Video',
  cite: PROVIDER,
  entries: [
    { name: 'Loom', hosts: ['loom.com'] },
    { name: 'Rumble', hosts: ['rumble.com'] },
  ],
};

// Shopping: marketplaces (GA4's shopping list). GA4 also lists stripe.com and
// checkout.stripe.com here; we do not — see CHECKOUT_RETURN below.
const SHOPPING_LISTED: HostList = {
  channel: 'Shopping',
  cite: GA4,
  entries: [
    { name: 'Amazon', hosts: ['amazon.com', 'amazon.co.uk', 'smile.amazon.com'] },
    { name: 'eBay', hosts: ['ebay.com', 'ebay.co.uk', 'ebay.com.au', 'ebay.de'] },
    { name: 'Etsy', hosts: ['etsy.com'] },
    { name: 'Walmart', hosts: ['walmart.com'] },
    { name: 'Alibaba', hosts: ['alibaba.com'] },
    { name: 'Mercado Libre', hosts: ['mercadolibre.com', 'mercadolibre.com.ar', 'mercadolibre.com.mx'] },
    { name: 'Shopify', hosts: ['shopify.com', 'shop.app'] },
    { name: 'Yahoo Shopping', hosts: ['shopping.yahoo.com', 'shopping.yahoo.co.jp'] },
    { name: 'Naver Shopping', hosts: ['shopping.naver.com'] },
    { name: 'Google Shopping', hosts: ['shopping.google.com'] },
  ],
};

const SHOPPING_PROVIDERS: HostList = {
  channel: 'Shopping',
  cite: PROVIDER,
  entries: [{ name: 'AliExpress', hosts: ['aliexpress.com'] }],
};

// Affiliate networks' click-redirect hosts. Most redirect with an HTTP 302, which
// keeps the publisher's page as the referrer, so these hosts show up only when a
// network redirects by script; the stronger affiliate signals are utm_medium and
// the affiliate click ids below.
const AFFILIATE_PROVIDERS: HostList = {
  channel: 'Affiliate',
  cite: PROVIDER,
  entries: [
    { name: 'Awin', hosts: ['awin1.com'] },
    { name: 'ShareASale', hosts: ['shareasale.com'] },
    { name: 'CJ', hosts: ['anrdoezrs.net', 'jdoqocy.com', 'tkqlhce.com', 'dpbolvw.net', 'kqzyfj.com'] },
    { name: 'Rakuten Advertising', hosts: ['click.linksynergy.com'] },
    { name: 'ClickBank', hosts: ['hop.clickbank.net'] },
    { name: 'Skimlinks', hosts: ['go.skimresources.com'] },
    { name: 'Sovrn', hosts: ['redirect.viglink.com'] },
    { name: 'Impact', hosts: ['sjv.io', 'pxf.io', '7eer.net'] },
    { name: 'PartnerStack', hosts: ['grsm.io'] },
  ],
};

// Payment checkouts. A buyer coming back from the checkout finishes the visit that
// sent them there; counting it as a new Referral (or GA4's Shopping) visit would
// let the payment provider take the credit under last-non-direct attribution.
// These hosts therefore classify as Direct (source null).
const CHECKOUT_RETURN: HostList = {
  channel: 'Direct',
  cite: PROVIDER,
  entries: [
    { name: 'Stripe', hosts: ['checkout.stripe.com', 'buy.stripe.com', 'billing.stripe.com', 'invoice.stripe.com'] },
    { name: 'PayPal', hosts: ['paypal.com'] },
    { name: 'Lemon Squeezy', hosts: ['lemonsqueezy.com'] },
    { name: 'Paddle', hosts: ['checkout.paddle.com', 'buy.paddle.com'] },
    { name: 'Polar', hosts: ['polar.sh'] },
  ],
};

/** Every host list, in no particular order (a host may appear in only one). */
export const HOST_LISTS: readonly HostList[] = [
  SEARCH_MATOMO,
  SEARCH_PROVIDERS,
  AI_MATOMO,
  AI_PROVIDERS,
  COMMUNITIES_LISTED,
  COMMUNITIES_PROVIDERS,
  SOCIAL_LISTED,
  SOCIAL_PROVIDERS,
  EMAIL_PROVIDERS,
  NEWSLETTER_PROVIDERS,
  VIDEO_LISTED,
  VIDEO_PROVIDERS,
  SHOPPING_LISTED,
  SHOPPING_PROVIDERS,
  AFFILIATE_PROVIDERS,
  CHECKOUT_RETURN,
];

/**
 * Hosts whose subdomains are other products and must not inherit the entry:
 * `docs.google.com` is not Google search, `finance.yahoo.com` not Yahoo search,
 * `blog.naver.com` not Naver search, `aws.amazon.com` not shopping. Their
 * relevant subdomains are listed explicitly above.
 */
export const HOSTS_WITHOUT_SUBDOMAINS: readonly string[] = [
  'google.com',
  'yahoo.com',
  'yahoo.co.jp',
  'naver.com',
  'amazon.com',
];

/**
 * Leading labels that only pick a web or mobile front end or a link shim of the
 * same service (`www.`, `m.facebook.com`, `l.facebook.com`, `lm.facebook.com`,
 * `mobile.twitter.com`, `touch.facebook.com`, `amp.reddit.com`), dropped before
 * matching so that they also match hosts in HOSTS_WITHOUT_SUBDOMAINS (`m.naver.com`).
 * Never dropped when that would leave a single label (`m.me` stays `m.me`).
 */
export const IGNORED_HOST_PREFIXES: readonly string[] = ['www', 'm', 'mobile', 'l', 'lm', 'touch', 'amp'];

/**
 * Google's country domains (GA4 and Matomo both match `google.{}`): `google.<x>`
 * where `<x>` is a two-letter country code or one of `EXTRA_TLDS`, and
 * `google.<sld>.<cc>` where `<sld>` is one of `SECOND_LEVELS` (google.co.uk,
 * google.com.au). Such a host is read as `google.com` with the same subdomains.
 */
export const GOOGLE_TLD_RULE = {
  label: 'google',
  canonical: 'google.com',
  extraTlds: ['com', 'cat'],
  secondLevels: ['co', 'com'],
} as const;

/**
 * utm_medium values per channel, compared lowercased and trimmed.
 * GA4: email|e-mail|e_mail|e mail → Email; social|social-network|social-media|sm|
 * social network|social media → Social; affiliate(s) → Affiliates; referral →
 * Referral; organic → Organic Search; display|banner|expandable|interstitial|cpm →
 * Display (Paid here, see PAID_MEDIUMS). Ours, for the channels GA4 lacks or
 * spellings it misses: `newsletter(s)`, `social_media`, `partner`, `community`,
 * `forum`, `ai`.
 */
export const UTM_MEDIUM_CHANNELS: Readonly<Record<string, Channel>> = {
  email: 'Email',
  'e-mail': 'Email',
  e_mail: 'Email',
  'e mail': 'Email',
  newsletter: 'Newsletter',
  newsletters: 'Newsletter',
  social: 'Social',
  'social-network': 'Social',
  'social-media': 'Social',
  social_media: 'Social',
  sm: 'Social',
  'social network': 'Social',
  'social media': 'Social',
  affiliate: 'Affiliate',
  affiliates: 'Affiliate',
  partner: 'Affiliate',
  referral: 'Referral',
  organic: 'Search',
  community: 'Communities',
  forum: 'Communities',
  ai: 'AI',
};

/** GA4 organic social matches its medium list as a prefix (`social…`). */
export const UTM_MEDIUM_PREFIX_CHANNELS: ReadonlyArray<readonly [prefix: string, channel: Channel]> = [
  ['social', 'Social'],
];

/** GA4 organic video: utm_medium containing `video` (paid video is caught by the paid rule first). */
export const UTM_MEDIUM_SUBSTRING_CHANNELS: ReadonlyArray<readonly [substring: string, channel: Channel]> = [
  ['video', 'Video'],
];

/**
 * Paid utm_medium values. GA4 paid rule: `^(.*cp.*|ppc|retargeting|paid.*)$`,
 * plus its Display mediums (`cpm` also matches the substring rule; listed for
 * reading). `ads`, `ad` and `sem` are common in the wild and added here.
 * `paidsearch`, `paid_social`, … are covered by the prefix rule.
 */
export const PAID_MEDIUMS: readonly string[] = [
  'ppc',
  'retargeting',
  'display',
  'banner',
  'expandable',
  'interstitial',
  'cpm',
  'ads',
  'ad',
  'sem',
];
/** utm_medium starting with one of these is paid (GA4 `paid.*`). */
export const PAID_MEDIUM_PREFIXES: readonly string[] = ['paid'];
/** utm_medium containing one of these is paid (GA4 `.*cp.*`: cpc, cpm, cpv, cpa, …). */
export const PAID_MEDIUM_SUBSTRINGS: readonly string[] = ['cp'];

/** utm_source values that name a channel rather than a site. GA4: email|e-mail|e_mail|e mail. */
export const UTM_SOURCE_CHANNELS: Readonly<Record<string, Channel>> = {
  email: 'Email',
  'e-mail': 'Email',
  e_mail: 'Email',
  'e mail': 'Email',
  newsletter: 'Newsletter',
};

/**
 * GA4 organic shopping: utm_campaign matching `^(.*(([^a-df-z]|^)shop|shopping).*)$`
 * (so `eshop` and `shop_sale` match, `workshop` does not).
 */
export const SHOPPING_CAMPAIGN = /(?:^|[^a-df-z])shop|shopping/;

/** A click-id query parameter and what its presence means. */
export interface ClickIdRule {
  /** Parameter name, lowercase. */
  readonly param: string;
  readonly channel: Channel;
  /** The network that appends it, reported as `source` when nothing better is known. */
  readonly source: string;
  /**
   * Only counts together with a paid utm_medium. Meta appends `fbclid` to every
   * outbound link, organic posts included, so alone it says nothing about payment.
   */
  readonly onlyWithPaidMedium?: boolean;
}

/** Click ids appended by ad, affiliate and email platforms (each documented by its provider). */
export const CLICK_IDS: readonly ClickIdRule[] = [
  // Ad platforms' auto-tagging: Paid wins over everything.
  { param: 'gclid', channel: 'Paid', source: 'Google' },
  { param: 'gbraid', channel: 'Paid', source: 'Google' },
  { param: 'wbraid', channel: 'Paid', source: 'Google' },
  { param: 'gad_source', channel: 'Paid', source: 'Google' },
  { param: 'dclid', channel: 'Paid', source: 'Google' },
  { param: 'msclkid', channel: 'Paid', source: 'Bing' },
  { param: 'fbclid', channel: 'Paid', source: 'Facebook', onlyWithPaidMedium: true },
  { param: 'ttclid', channel: 'Paid', source: 'TikTok' },
  { param: 'twclid', channel: 'Paid', source: 'X' },
  { param: 'li_fat_id', channel: 'Paid', source: 'LinkedIn' },
  { param: 'epik', channel: 'Paid', source: 'Pinterest' },
  { param: 'sccid', channel: 'Paid', source: 'Snapchat' },
  { param: 'rdt_cid', channel: 'Paid', source: 'Reddit' },
  { param: 'qclid', channel: 'Paid', source: 'Quora' },
  { param: 'yclid', channel: 'Paid', source: 'Yandex' },
  { param: 'tblci', channel: 'Paid', source: 'Taboola' },
  // Affiliate networks' click ids.
  { param: 'irclickid', channel: 'Affiliate', source: 'Impact' },
  { param: 'awc', channel: 'Affiliate', source: 'Awin' },
  { param: 'cjevent', channel: 'Affiliate', source: 'CJ' },
  { param: 'sscid', channel: 'Affiliate', source: 'ShareASale' },
  { param: 'ransiteid', channel: 'Affiliate', source: 'Rakuten Advertising' },
  { param: 'fpr', channel: 'Affiliate', source: 'FirstPromoter' },
  // Email and newsletter platforms' per-recipient tracking parameters.
  { param: 'mc_cid', channel: 'Newsletter', source: 'Mailchimp' },
  { param: '_hsenc', channel: 'Email', source: 'HubSpot' },
  { param: 'mkt_tok', channel: 'Email', source: 'Marketo' },
  { param: 'ck_subscriber_id', channel: 'Newsletter', source: 'Kit' },
];
