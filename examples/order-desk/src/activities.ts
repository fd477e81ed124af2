/** The application's own activities, registered next to turnpike's. */
export const sentNotices: string[] = [];

export async function notifyCustomer(notice: { orderId: string; text: string }): Promise<void> {
  sentNotices.push(`${notice.orderId}: ${notice.text}`);
}
