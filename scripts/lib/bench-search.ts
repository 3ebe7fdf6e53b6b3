// The `search` case of `make bench` (scripts/bench-http.ts): 100,000 pages of mixed Japanese and English text in
// 1,000 notes (800 the bench user may read, 200 private ones of another team it may not), seeded with set-based SQL,
// the index built by `npm run admin -- reindex` (the code path an operator uses), then searchNotes timed one request
// at a time for 2-character Japanese words and for English words.
//
// The text: sentences drawn from a vocabulary with a Zipf-like distribution (a few words are everywhere, most are
// rare, as in real text): Japanese sentences of 2-character kanji words, katakana words and particles, without
// spaces; English sentences of words with spaces. The query words are drawn from every frequency band, so some
// match tens of thousands of pages, others a few hundred.
import type pg from 'pg';
import { foldCase } from '../../src/modules/text/fold.ts';

/** A small deterministic generator (mulberry32), so every run seeds the same text. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KANJI = [...'会議課題仕様設計確認資料予定担当対応修正開発運用試験環境構成管理情報共有報告連絡相談計画検討作業手順変更履歴更新削除追加機能画面表示入力出力登録検索結果条件項目一覧詳細説明記録保存移行障害調査原因影響範囲優先期限完了進捗状況品質性能負荷監視通知設定権限利用者部門社内外部契約費用見積請求発注納品']; // 160 kanji
const KATAKANA_WORDS = ['キャプチャ', 'ツール', 'サーバー', 'データベース', 'ネットワーク', 'プロジェクト', 'スケジュール', 'レビュー', 'テスト', 'リリース',
  'デプロイ', 'バックアップ', 'ログ', 'エラー', 'ユーザー', 'アカウント', 'パスワード', 'メール', 'チーム', 'ミーティング',
  'ドキュメント', 'ファイル', 'フォルダ', 'ブラウザ', 'アプリ', 'インストール', 'アップデート', 'セキュリティ', 'クラウド', 'コスト'];
const PARTICLES = ['の', 'を', 'に', 'は', 'が', 'と', 'で', 'から', 'まで', 'について', 'として', 'により'];
const ENGLISH_WORDS = ('the of and to in is for on with as by at from that this be are was it an or not have has will can all ' +
  'deploy release rollback server database network project schedule review test backup error user account password mail team ' +
  'meeting document file folder browser install update security cloud cost budget report issue task plan design spec change ' +
  'history delete add feature screen display input output search result condition item list detail record save migrate incident ' +
  'cause impact scope priority deadline progress status quality performance load monitor notify setting permission department ' +
  'contract estimate invoice order delivery customer support ticket queue cache index query latency throughput storage bucket ' +
  'cluster node replica shard partition schema table column migration version branch merge commit build pipeline artifact ' +
  'container image registry secret token certificate domain proxy gateway router endpoint payload request response header ' +
  'session cookie login logout signup profile avatar comment thread mention notification digest summary agenda minutes action ' +
  'owner reviewer approver stakeholder sponsor vendor partner roadmap milestone sprint backlog estimate velocity retrospective ' +
  'standup kanban board column swimlane epic story bug hotfix patch regression outage postmortem runbook playbook oncall pager')
  .split(' ');

/** Words of the two languages, most frequent first (2-character kanji words first among the Japanese ones). */
function vocabulary(random: () => number): { japanese: string[]; english: string[] } {
  const japanese = new Set<string>(['会議', '課題', '仕様', '設計', '確認']);
  while (japanese.size < 3000) japanese.add(KANJI[Math.floor(random() * KANJI.length)]! + KANJI[Math.floor(random() * KANJI.length)]!);
  const words = [...japanese];
  // katakana words spread through the frequency ranks
  KATAKANA_WORDS.forEach((word, index) => words.splice(20 + index * 50, 0, word));
  const english = [...ENGLISH_WORDS];
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  while (english.length < 3000) {
    let word = '';
    for (let i = 0, length = 4 + Math.floor(random() * 6); i < length; i += 1) word += letters[Math.floor(random() * 26)];
    english.push(word);
  }
  return { japanese: words, english };
}

/** Draws ranks 0..n-1 with probability proportional to 1/(rank+1). */
function zipf(random: () => number, n: number): () => number {
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 1; rank <= n; rank += 1) cumulative.push((total += 1 / rank));
  return () => {
    const target = random() * total;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

export const SEARCH_NOTES = 1000;
export const SEARCH_PAGES_PER_NOTE = 100;
const SENTENCES = 20_000;

export type SearchSeed = { japaneseWords: string[]; englishWords: string[]; seedSeconds: number };

/**
 * Seeds the notes and pages with a few set-based statements: `readableTeam` gets 800 public notes, `otherTeam` 200
 * private ones, each with 100 pages of 4 to 7 sentences drawn from 20,000 generated ones (about 400 characters).
 */
export async function seedSearch(sql: pg.Client, readableTeam: string, otherTeam: string): Promise<SearchSeed> {
  const started = performance.now();
  const random = generator(20261122);
  const { japanese, english } = vocabulary(random);
  const japaneseRank = zipf(random, japanese.length);
  const englishRank = zipf(random, english.length);
  const sentences: string[] = [];
  for (let i = 0; i < SENTENCES; i += 1) {
    if (i % 2 === 0) {
      let sentence = '';
      for (let w = 0, count = 4 + Math.floor(random() * 5); w < count; w += 1) {
        sentence += japanese[japaneseRank()]! + (w < count - 1 ? PARTICLES[Math.floor(random() * PARTICLES.length)]! : '');
      }
      sentences.push(`${sentence}。`);
    } else {
      const words: string[] = [];
      for (let w = 0, count = 8 + Math.floor(random() * 8); w < count; w += 1) words.push(english[englishRank()]!);
      const text = words.join(' ');
      sentences.push(`${text[0]!.toUpperCase()}${text.slice(1)}. `);
    }
  }
  await sql.query('create temporary table bench_sentences (id int primary key, text text not null)');
  await sql.query('insert into bench_sentences select ordinality::int, value from jsonb_array_elements_text($1::jsonb) with ordinality', [JSON.stringify(sentences)]);
  const now = `date_trunc('second', now())`;
  for (const [team, count, isPrivate] of [[readableTeam, 800, false], [otherTeam, 200, true]] as const) {
    await sql.query(`insert into notes (team_id, user_id, slug, title, description, is_private, created_at, updated_at)
      select t.id, m.user_id, 'search' || g, 'Search note ' || g || ' ' || $3::text, '', $2, ${now} - g * interval '1 minute', ${now} - g * interval '1 minute'
        from generate_series(1, $4::int) g, teams t join memberships m on m.team_id = t.id and m.role = 'manager'
       where t.name_key = $1 and m.id = (select min(id) from memberships where team_id = t.id and role = 'manager')`,
    [foldCase(team), isPrivate, isPrivate ? '非公開' : '公開', count]);
  }
  // one statement: 100 pages per note, each 4 to 7 sentences picked by hashing (note, page, k): deterministic
  await sql.query(`insert into pages (note_id, parent_id, position, title, content, created_at, updated_at)
    select n.id, null, g,
           (select s.text from bench_sentences s where s.id = 1 + abs(hashint4(n.id * 1000 + g)) % ${SENTENCES}),
           (select string_agg('<p>' || s.text || '</p>', '' order by k)
              from generate_series(1, 4 + abs(hashint4(n.id * 7 + g)) % 4) k
              join bench_sentences s on s.id = 1 + abs(hashint4(n.id * 100000 + g * 10 + k)) % ${SENTENCES}),
           n.created_at, n.updated_at
      from notes n cross join generate_series(1, ${SEARCH_PAGES_PER_NOTE}) g
     where n.slug like 'search%'`);
  await sql.query('drop table bench_sentences');
  // query words from every frequency band: 2-character kanji words (ranks 0-2000) and English words (ranks 20-2000)
  const bands = [0, 1, 2, 3, 4, 10, 30, 60, 100, 200, 300, 500, 800, 1200, 2000];
  const japaneseWords = bands.map((rank) => japanese[rank]!).filter((word) => word.length === 2);
  const englishWords = bands.map((rank) => english[rank + 20]!);
  return { japaneseWords, englishWords, seedSeconds: (performance.now() - started) / 1000 };
}

export type Latency = { p50: number; p99: number; requests: number; failures: number; meanHits: number };

/** Times searchNotes one request at a time (after one warm-up pass), cycling through the words `rounds` times. */
export async function timeSearches(baseUrl: string, token: string, words: readonly string[], rounds: number): Promise<Latency> {
  const latencies: number[] = [];
  let failures = 0;
  let hits = 0;
  for (let round = -1; round < rounds; round += 1) {
    for (const word of words) {
      const started = performance.now();
      const response = await fetch(`${baseUrl}/api/v1/search?q=${encodeURIComponent(word)}`, { headers: { Authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      const elapsed = performance.now() - started;
      if (round < 0) continue;
      latencies.push(elapsed);
      if (response.status !== 200) failures += 1;
      hits += Number(response.headers.get('x-total-count') ?? 0);
    }
  }
  latencies.sort((a, b) => a - b);
  const at = (fraction: number) => latencies[Math.min(latencies.length - 1, Math.ceil(fraction * latencies.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99), requests: latencies.length, failures, meanHits: hits / latencies.length };
}
