// The console's shell: navigation, the page outlet, and a last-resort error banner so a failure
// outside any page still shows up instead of leaving a blank screen.
import './style.css';
import { error_box, h, link, replace } from './dom.ts';
import { render_current, route } from './router.ts';
import { overview_page } from './pages/overview.ts';
import { topics_page } from './pages/topics.ts';
import { topic_detail_page } from './pages/topic_detail.ts';
import { group_detail_page, groups_page } from './pages/groups.ts';
import { queue_detail_page, queues_page } from './pages/queues.ts';
import { dead_letter_topic_page, dead_letters_page } from './pages/dead_letters.ts';
import { brokers_page } from './pages/brokers.ts';

route('/', 'overview', 'Overview', overview_page);
route('/topics', 'topics', 'Topics', topics_page);
route('/topics/:name', 'topics', 'Topic', topic_detail_page);
route('/groups', 'groups', 'Consumer groups', groups_page);
route('/groups/:id', 'groups', 'Consumer group', group_detail_page);
route('/queues', 'queues', 'Queues', queues_page);
route('/queues/:group', 'queues', 'Queue', queue_detail_page);
route('/dead-letters', 'dead-letters', 'Dead letters', dead_letters_page);
route('/dead-letters/:topic', 'dead-letters', 'Dead-letter topic', dead_letter_topic_page);
route('/brokers', 'brokers', 'Brokers', brokers_page);

const SECTIONS: Array<[section: string, title: string]> = [
  ['overview', 'Overview'],
  ['topics', 'Topics'],
  ['groups', 'Consumer groups'],
  ['queues', 'Queues'],
  ['dead-letters', 'Dead letters'],
  ['brokers', 'Brokers'],
];

const nav_links = SECTIONS.map(([section, title]) =>
  link(section === 'overview' ? '#/' : `#/${section}`, title, { testid: `nav-${section}`, 'data-section': section }),
);
const banner = h('div', { class: 'banner' });
const outlet = h('main', { class: 'content' });
const app = document.getElementById('app')!;
replace(
  app,
  h(
    'aside',
    { class: 'sidebar' },
    h('a', { class: 'brand', href: '#/' }, h('span', { class: 'brand-mark' }, '≋'), ' Sluice'),
    h('nav', {}, nav_links),
  ),
  h('div', { class: 'main' }, banner, outlet),
);

const highlight = (section: string) => {
  for (const a of nav_links) a.classList.toggle('active', a.dataset.section === section);
};
const show = () => {
  replace(banner);
  void render_current(outlet, highlight);
};

window.addEventListener('hashchange', show);
window.addEventListener('error', (event) =>
  replace(banner, error_box(event.error ?? event.message, 'The console hit an error')),
);
window.addEventListener('unhandledrejection', (event) =>
  replace(banner, error_box(event.reason, 'The console hit an error')),
);
show();
